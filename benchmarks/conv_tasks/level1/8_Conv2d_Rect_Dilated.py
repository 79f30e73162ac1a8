import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Convolution: a 3x5 kernel dilated 2 along the height, 32 to 64 channels, no bias.
    """

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(32, 64, (3, 5), dilation=(2, 1), padding=(2, 2), bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(16, 32, 64, 64)]


def get_init_inputs():
    return []
