import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Contraction: a 2D convolution in four groups.
    """

    def __init__(self, channels: int):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1, groups=4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


batch = 2
channels = 16
side = 18


def get_inputs():
    return [torch.randn(batch, channels, side, side)]


def get_init_inputs():
    return [channels]
