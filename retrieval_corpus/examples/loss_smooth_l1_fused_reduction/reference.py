"""Smooth L1 (Huber-style) regression loss, averaged over all elements."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, beta: float):
        super().__init__()
        self.beta = beta

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.smooth_l1_loss(predictions, targets, beta=self.beta)


BATCH, DIM = 8192, 2048


def get_inputs():
    return [torch.randn(BATCH, DIM) * 2.0, torch.randn(BATCH, DIM) * 2.0]


def get_init_inputs():
    return [1.0]
