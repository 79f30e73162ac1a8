import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Norm: group normalisation, four groups over sixteen channels, with affine weights.
    """

    def __init__(self, groups: int, channels: int):
        super().__init__()
        self.norm = nn.GroupNorm(groups, channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


batch = 8
groups = 4
channels = 16
length = 100


def get_inputs():
    return [torch.randn(batch, channels, length)]


def get_init_inputs():
    return [groups, channels]
