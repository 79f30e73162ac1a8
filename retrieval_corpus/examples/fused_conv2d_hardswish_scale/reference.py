"""Conv2d -> HardSwish -> learned per-channel scale (a mobile-network style block tail)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Returns hardswish(conv(x)) * scale with scale of shape (out_channels, 1, 1)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.scale = nn.Parameter(torch.randn(out_channels, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.hardswish(self.conv(x)) * self.scale


batch_size = 16
in_channels = 32
out_channels = 64
height = width = 64
kernel_size = 3


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs() -> list:
    return [in_channels, out_channels, kernel_size]
