"""SiLU / swish activation: x * sigmoid(x)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(x)


SHAPE = (32, 1024, 1000)


def get_inputs():
    return [torch.randn(*SHAPE) * 4.0]


def get_init_inputs():
    return []
