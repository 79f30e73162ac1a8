"""Causal depthwise Conv1d (left padding, trimmed) followed by SiLU, as in Mamba-style blocks."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Returns silu(conv1d(x)[..., :L]) with groups == channels and padding kernel_size - 1."""

    def __init__(self, channels: int, kernel_size: int) -> None:
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, kernel_size, groups=channels, padding=kernel_size - 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        length = x.shape[-1]
        return F.silu(self.conv(x)[..., :length])


batch_size = 8
channels = 768
seq_len = 2048
kernel_size = 4


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(batch_size, channels, seq_len)]


def get_init_inputs() -> list:
    return [channels, kernel_size]
