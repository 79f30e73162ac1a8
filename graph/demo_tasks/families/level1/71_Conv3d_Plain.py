import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Convolution: a 3-D convolution with bias.
    """

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(3, 4, 3)

    def forward(self, x) -> torch.Tensor:
        return self.conv(x)


batch = 2
side = 8


def get_inputs():
    return [torch.randn(batch, 3, side, side, side)]


def get_init_inputs():
    return []
