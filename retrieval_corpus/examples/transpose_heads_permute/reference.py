"""Attention head split: (batch, seq, heads, head_dim) -> (batch, heads, seq, head_dim) copy."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """Returns x.permute(0, 2, 1, 3) as a new contiguous tensor."""

    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.permute(0, 2, 1, 3).contiguous()


batch_size = 8
seq_len = 1024
num_heads = 16
head_dim = 64


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(batch_size, seq_len, num_heads, head_dim)]


def get_init_inputs() -> list:
    return []
