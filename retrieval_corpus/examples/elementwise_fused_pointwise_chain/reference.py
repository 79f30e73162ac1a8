"""A chain of pointwise ops over two inputs: out = exp(-x^2 / 2) * cos(y) + 0.1 * x."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.exp(-0.5 * x * x) * torch.cos(y) + 0.1 * x


SHAPE = (64, 256, 1024)


def get_inputs():
    return [torch.randn(*SHAPE), torch.randn(*SHAPE) * 3.0]


def get_init_inputs():
    return []
