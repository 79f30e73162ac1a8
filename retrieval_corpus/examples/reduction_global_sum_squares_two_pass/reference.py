"""Sum of squares of every element of a tensor, returned as a 0-d tensor."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x * x)


SHAPE = (8192, 4096)


def get_inputs():
    return [torch.randn(*SHAPE)]


def get_init_inputs():
    return []
