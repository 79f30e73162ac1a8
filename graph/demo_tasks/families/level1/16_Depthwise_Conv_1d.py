import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Contraction: a depthwise 1D convolution (one filter per channel), width 5.
    """

    def __init__(self, channels: int):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, 5, padding=2, groups=channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


batch = 4
channels = 32
length = 200


def get_inputs():
    return [torch.randn(batch, channels, length)]


def get_init_inputs():
    return [channels]
