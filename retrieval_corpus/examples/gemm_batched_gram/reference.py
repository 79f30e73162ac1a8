"""Batched second-moment (Gram) matrices X^T X / n of per-sample feature sets."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """Returns bmm(x^T, x) / n for x of shape (batch, n, d) -> (batch, d, d)."""

    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.bmm(x.transpose(1, 2), x) / x.shape[1]


batch_size = 64
n = 256
d = 200


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(batch_size, n, d)]


def get_init_inputs() -> list:
    return []
