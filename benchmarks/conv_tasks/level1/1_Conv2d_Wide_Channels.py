import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Convolution: 3x3, 64 to 128 channels, same padding, no bias.
    """

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(64, 128, 3, padding=1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(16, 64, 64, 64)]


def get_init_inputs():
    return []
