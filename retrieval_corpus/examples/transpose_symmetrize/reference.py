"""Symmetric part of a batch of square matrices: 0.5 * (A + A^T)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """Returns 0.5 * (x + x.transpose(-1, -2)) for x of shape (batch, n, n)."""

    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return 0.5 * (x + x.transpose(-1, -2))


batch_size = 32
n = 500


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(batch_size, n, n)]


def get_init_inputs() -> list:
    return []
