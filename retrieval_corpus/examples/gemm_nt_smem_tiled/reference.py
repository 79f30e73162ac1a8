"""Pairwise dot products of two sets of vectors: A @ B^T (an NT GEMM, B stored row-major)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """Returns a @ b.T for a (M, K) and b (N, K): out[i, j] = <a[i], b[j]>."""

    def __init__(self) -> None:
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b.t())


M = 1000
N = 760
K = 500


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(M, K), torch.randn(N, K)]


def get_init_inputs() -> list:
    return []
