import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Window: 3x3 max pooling with stride 2 and one element of padding.
    """

    def __init__(self, kernel: int, stride: int, pad: int):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel, stride=stride, padding=pad)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


batch = 4
channels = 8
side = 30


def get_inputs():
    return [torch.randn(batch, channels, side, side)]


def get_init_inputs():
    return [3, 2, 1]
