"""Softmax across channels (dim=1) of an NCHW feature map, e.g. per-pixel class probabilities."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


BATCH, CHANNELS, HEIGHT, WIDTH = 32, 64, 64, 64


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH) * 2.0]


def get_init_inputs():
    return []
