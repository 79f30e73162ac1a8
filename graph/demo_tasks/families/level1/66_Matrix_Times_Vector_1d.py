import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Product: a matrix times a 1-D vector.
    """

    def __init__(self):
        super().__init__()
        pass

    def forward(self, a, v) -> torch.Tensor:
        return torch.matmul(a, v)


rows = 256
cols = 512


def get_inputs():
    return [torch.randn(rows, cols), torch.randn(cols)]


def get_init_inputs():
    return []
