"""Mean over the middle dimension of a 3-D tensor: (B, R, K) -> (B, K)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.mean(x, dim=self.dim)


BATCH, REDUCE, KEEP = 64, 512, 1024


def get_inputs():
    return [torch.randn(BATCH, REDUCE, KEEP)]


def get_init_inputs():
    return [1]
