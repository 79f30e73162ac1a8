"""Softmax over the last dimension of many short rows (attention-score shaped)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


BATCH, HEADS, QUERIES, KEYS = 8, 16, 512, 512


def get_inputs():
    return [torch.randn(BATCH, HEADS, QUERIES, KEYS) * 3.0]


def get_init_inputs():
    return []
