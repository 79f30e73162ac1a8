import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Convolution: 3-D, 3x3x3, 16 to 64 channels, same padding, no bias.
    """

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(16, 64, 3, padding=1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(8, 16, 16, 32, 32)]


def get_init_inputs():
    return []
