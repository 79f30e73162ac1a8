import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Pointwise: the SELU activation.
    """

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.selu(x)


rows = 128
cols = 512


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
