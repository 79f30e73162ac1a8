import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Convolution: 1x1, 256 to 128 channels, no bias.
    """

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(256, 128, 1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(16, 256, 32, 32)]


def get_init_inputs():
    return []
