import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Convolution: a 3x5 kernel with asymmetric padding.
    """

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 5, (3, 5), padding=(1, 2))

    def forward(self, x) -> torch.Tensor:
        return self.conv(x)


batch = 2
side = 14


def get_inputs():
    return [torch.randn(batch, 3, side, side)]


def get_init_inputs():
    return []
