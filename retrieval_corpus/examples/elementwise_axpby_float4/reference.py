"""Weighted sum of two same-shape tensors: out = alpha * x + beta * y."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, alpha: float, beta: float):
        super().__init__()
        self.alpha = alpha
        self.beta = beta

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self.alpha * x + self.beta * y


ROWS, COLS = 4096, 4096


def get_inputs():
    return [torch.randn(ROWS, COLS), torch.randn(ROWS, COLS)]


def get_init_inputs():
    return [0.75, -1.5]
