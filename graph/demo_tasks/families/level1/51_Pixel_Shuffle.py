import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Layout: pixel shuffle with factor two.
    """

    def __init__(self):
        super().__init__()
        self.shuffle = nn.PixelShuffle(2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.shuffle(x)


batch = 2
channels = 16
side = 8


def get_inputs():
    return [torch.randn(batch, channels, side, side)]


def get_init_inputs():
    return []
