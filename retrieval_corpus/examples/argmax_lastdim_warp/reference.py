"""Predicted class per sample: argmax over the last dimension of a (batch, classes) score matrix."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """Returns torch.argmax(x, dim=-1) (int64)."""

    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.argmax(x, dim=-1)


batch_size = 8192
num_classes = 1000


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(batch_size, num_classes)]


def get_init_inputs() -> list:
    return []
