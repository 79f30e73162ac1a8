"""Parametric ReLU with one learned slope per channel on an NCHW tensor."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.prelu = nn.PReLU(num_parameters=channels)
        nn.init.uniform_(self.prelu.weight, 0.05, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.prelu(x)


BATCH, CHANNELS, HEIGHT, WIDTH = 32, 64, 96, 96


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS]
