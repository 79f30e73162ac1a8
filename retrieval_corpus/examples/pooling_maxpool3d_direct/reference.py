"""3-D max pooling (window 2, stride 2) over a 5-D (N, C, D, H, W) feature volume."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, kernel_size: int, stride: int):
        super().__init__()
        self.pool = nn.MaxPool3d(kernel_size=kernel_size, stride=stride)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


BATCH, CHANNELS, DEPTH, HEIGHT, WIDTH = 16, 16, 32, 64, 64


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [2, 2]
