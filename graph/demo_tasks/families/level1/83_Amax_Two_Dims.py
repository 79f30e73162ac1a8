import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Reduction: amax over two trailing dims.
    """

    def __init__(self):
        super().__init__()
        pass

    def forward(self, x) -> torch.Tensor:
        return torch.amax(x, dim=(1, 2))


a = 8
b = 16
c = 32


def get_inputs():
    return [torch.randn(a, b, c)]


def get_init_inputs():
    return []
