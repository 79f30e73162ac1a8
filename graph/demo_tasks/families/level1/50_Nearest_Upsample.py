import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """
    Window: nearest-neighbour upsampling by two.
    """

    def __init__(self):
        super().__init__()
        pass

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.interpolate(x, scale_factor=2, mode="nearest")


batch = 2
channels = 4
side = 16


def get_inputs():
    return [torch.randn(batch, channels, side, side)]


def get_init_inputs():
    return []
