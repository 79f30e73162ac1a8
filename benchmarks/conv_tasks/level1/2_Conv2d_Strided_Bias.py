import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Convolution: 5x5, stride 2, 32 to 64 channels, with bias.
    """

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(32, 64, 5, stride=2, padding=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(32, 32, 96, 96)]


def get_init_inputs():
    return []
