"""Transformer MLP half-block tail: Linear -> exact GELU -> residual add."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Returns gelu(x @ W^T + b) + residual."""

    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return F.gelu(self.linear(x)) + residual


batch_size = 512
in_features = 1024
out_features = 2048


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(batch_size, in_features), torch.randn(batch_size, out_features)]


def get_init_inputs() -> list:
    return [in_features, out_features]
