import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Convolution with an activation: a 3x3 Conv2d (padding 1) followed by hardswish.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.hardswish(self.conv(x))


batch = 4
in_channels = 8
out_channels = 16
height = width = 32
kernel_size = 3


def get_inputs():
    return [torch.randn(batch, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
