"""BLAS-style SGEMM: alpha * (A @ B) + beta * C with ragged sizes."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """Returns alpha * (a @ b) + beta * c."""

    def __init__(self, alpha: float, beta: float) -> None:
        super().__init__()
        self.alpha = alpha
        self.beta = beta

    def forward(self, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        return self.alpha * torch.matmul(a, b) + self.beta * c


M = 1536
N = 1200
K = 777
alpha = 1.5
beta = -0.5


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(M, K), torch.randn(K, N), torch.randn(M, N)]


def get_init_inputs() -> list:
    return [alpha, beta]
