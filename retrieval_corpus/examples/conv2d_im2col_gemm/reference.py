"""Strided 3x3 Conv2d with bias (a downsampling stem layer)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """nn.Conv2d(in_channels, out_channels, 3, stride=2, padding=1) with bias."""

    def __init__(self, in_channels: int, out_channels: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=3, stride=2, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


batch_size = 8
in_channels = 12
out_channels = 40
height = width = 96


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs() -> list:
    return [in_channels, out_channels]
