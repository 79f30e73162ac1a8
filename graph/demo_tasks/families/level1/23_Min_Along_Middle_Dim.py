import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Reduction: the smallest value along the middle dim.
    """

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.min(x, dim=self.dim)[0]


batch = 8
middle = 200
last = 48


def get_inputs():
    return [torch.randn(batch, middle, last)]


def get_init_inputs():
    return [1]
