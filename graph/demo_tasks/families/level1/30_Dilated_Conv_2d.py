import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Convolution: a 2-D convolution with dilation 2, no bias.
    """

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 8, kernel_size=3, dilation=2, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


batch = 2
side = 20


def get_inputs():
    return [torch.randn(batch, 4, side, side)]


def get_init_inputs():
    return []
