"""Vector-matrix product v @ A (a GEMV against the transposed layout: reduction over rows of A)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """Returns v @ a for v of shape (M,) and a of shape (M, N) -> (N,)."""

    def __init__(self) -> None:
        super().__init__()

    def forward(self, v: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        return torch.matmul(v, a)


M = 8192
N = 2048


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(M), torch.randn(M, N)]


def get_init_inputs() -> list:
    return []
