"""Sum over the last dimension of a 2-D tensor (one value per row)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=-1)


ROWS, COLS = 32768, 1024


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
