"""Depthwise 5x5 convolution (groups == channels), stride 1, 'same' padding."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """nn.Conv2d(C, C, k, padding=k // 2, groups=C) with bias."""

    def __init__(self, channels: int, kernel_size: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size, padding=kernel_size // 2, groups=channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


batch_size = 16
channels = 128
height = width = 60
kernel_size = 5


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs() -> list:
    return [channels, kernel_size]
