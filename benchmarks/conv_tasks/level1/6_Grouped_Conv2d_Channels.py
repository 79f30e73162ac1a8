import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Convolution: 3x3 in two groups of 64 channels, no bias.
    """

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(128, 128, 3, padding=1, groups=2, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(16, 128, 32, 32)]


def get_init_inputs():
    return []
