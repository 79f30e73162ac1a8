import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Map: a gated linear unit written with chunk.
    """

    def __init__(self):
        super().__init__()
        pass

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a, b = x.chunk(2, dim=1)
        return a * torch.sigmoid(b)


rows = 32
cols = 256


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
