import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Convolution: 1-D, dilation 2, stride 2, with bias.
    """

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(4, 8, 3, stride=2, dilation=2)

    def forward(self, x) -> torch.Tensor:
        return self.conv(x)


batch = 2
length = 64


def get_inputs():
    return [torch.randn(batch, 4, length)]


def get_init_inputs():
    return []
