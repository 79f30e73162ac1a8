"""Inclusive prefix sum of one long 1-D array of per-bin counts (offsets / running totals)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """Returns torch.cumsum(x, dim=0) for a 1-D tensor x."""

    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, dim=0)


n = 1_500_007


def get_inputs() -> list[torch.Tensor]:
    # counts stored as float32: integer values keep every partial sum exact (< 2**24), so any
    # summation order gives bit-identical results
    return [torch.randint(0, 8, (n,)).float()]


def get_init_inputs() -> list:
    return []
