import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """
    Map: softshrink, hardshrink, tanhshrink, threshold and relu6 chained.
    """

    def __init__(self):
        super().__init__()
        pass

    def forward(self, x) -> torch.Tensor:
        return F.relu6(F.threshold(F.tanhshrink(F.hardshrink(F.softshrink(x, 0.3), 0.2)), 0.1, -1.0))


rows = 64
cols = 256


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
