import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """
    Convolution: reflect padding, then a 3x3 convolution.
    """

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(F.pad(x, (1, 1, 1, 1), mode="reflect"))


batch = 2
side = 16


def get_inputs():
    return [torch.randn(batch, 3, side, side)]


def get_init_inputs():
    return []
