import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Product: a diagonal matrix built from a vector times a matrix.
    """

    def __init__(self):
        super().__init__()
        pass

    def forward(self, d: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
        return torch.diag(d) @ m


n = 256
cols = 64


def get_inputs():
    return [torch.randn(n), torch.randn(n, cols)]


def get_init_inputs():
    return []
