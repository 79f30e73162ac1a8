"""Maximum over very long rows: torch.amax along the last dimension."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.amax(x, dim=-1)


ROWS, COLS = 512, 65536


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
