import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Norm: each row divided by its standard deviation, kept dim.
    """

    def __init__(self):
        super().__init__()
        pass

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x / (x.std(dim=1, keepdim=True) + 1e-6)


rows = 32
cols = 500


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
