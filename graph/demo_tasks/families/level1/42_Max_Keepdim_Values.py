import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Reduction: the largest value per channel, kept dim, read through .values.
    """

    def __init__(self):
        super().__init__()
        pass

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.max(x, dim=1, keepdim=True).values


batch = 8
channels = 64
length = 50


def get_inputs():
    return [torch.randn(batch, channels, length)]


def get_init_inputs():
    return []
