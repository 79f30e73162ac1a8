import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Convolution: transposed 3-D, 3x3x3, stride 2, 32 to 32 channels, output padding 1, with bias.
    """

    def __init__(self):
        super().__init__()
        self.conv = nn.ConvTranspose3d(32, 32, 3, stride=2, padding=1, output_padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(4, 32, 16, 16, 16)]


def get_init_inputs():
    return []
