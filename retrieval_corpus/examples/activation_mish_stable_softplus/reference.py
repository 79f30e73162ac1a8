"""Mish activation written out as x * tanh(softplus(x))."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.tanh(F.softplus(x))


SHAPE = (16, 96, 128, 128)


def get_inputs():
    return [torch.randn(*SHAPE) * 5.0]


def get_init_inputs():
    return []
