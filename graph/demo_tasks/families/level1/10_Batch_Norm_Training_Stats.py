import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Norm: batch normalisation in training mode (batch statistics, as a freshly built module).
    """

    def __init__(self, channels: int):
        super().__init__()
        self.norm = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


batch = 8
channels = 6
side = 14


def get_inputs():
    return [torch.randn(batch, channels, side, side)]


def get_init_inputs():
    return [channels]
