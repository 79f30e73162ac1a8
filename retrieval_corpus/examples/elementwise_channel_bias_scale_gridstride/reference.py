"""Per-channel affine on an NCHW activation map: out = (x + bias[c]) * scale[c]."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(channels, 1, 1) * 0.1)
        self.scale = nn.Parameter(torch.rand(channels, 1, 1) + 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x + self.bias) * self.scale


BATCH, CHANNELS, HEIGHT, WIDTH = 16, 128, 64, 64


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS]
