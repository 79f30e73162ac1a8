"""GroupNorm on an NCHW activation with learned per-channel affine."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, groups: int, channels: int):
        super().__init__()
        self.norm = nn.GroupNorm(groups, channels, eps=1e-5)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


BATCH, CHANNELS, HEIGHT, WIDTH, GROUPS = 16, 64, 128, 128, 8


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH) * 1.5 + 0.3]


def get_init_inputs():
    return [GROUPS, CHANNELS]
