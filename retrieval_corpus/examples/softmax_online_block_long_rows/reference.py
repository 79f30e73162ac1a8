"""Softmax over very long rows (a large vocabulary of logits)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


BATCH, VOCAB = 256, 65536


def get_inputs():
    return [torch.randn(BATCH, VOCAB) * 4.0]


def get_init_inputs():
    return []
