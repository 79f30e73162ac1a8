"""Attention scores of one decoding step: each head's query against its cached keys, scaled."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """scores[b, h, s] = <k[b, h, s, :], q[b, h, :]> * head_dim ** -0.5."""

    def __init__(self, head_dim: int) -> None:
        super().__init__()
        self.scale = head_dim ** -0.5

    def forward(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        return torch.matmul(k, q.unsqueeze(-1)).squeeze(-1) * self.scale


batch_size = 8
num_heads = 16
seq_len = 1024
head_dim = 128


def get_inputs() -> list[torch.Tensor]:
    q = torch.randn(batch_size, num_heads, head_dim)
    k = torch.randn(batch_size, num_heads, seq_len, head_dim)
    return [q, k]


def get_init_inputs() -> list:
    return [head_dim]
