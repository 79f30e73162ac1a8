import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Convolution: a transposed 1-D convolution with stride and padding.
    """

    def __init__(self):
        super().__init__()
        self.conv = nn.ConvTranspose1d(6, 3, 4, stride=2, padding=1)

    def forward(self, x) -> torch.Tensor:
        return self.conv(x)


batch = 2
length = 30


def get_inputs():
    return [torch.randn(batch, 6, length)]


def get_init_inputs():
    return []
