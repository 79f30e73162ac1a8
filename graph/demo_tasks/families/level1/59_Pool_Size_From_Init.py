import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Window: max pooling whose kernel and stride come from the init arguments.
    """

    def __init__(self, kernel: int, stride: int):
        super().__init__()
        self.pool = nn.MaxPool1d(kernel, stride)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


batch = 4
channels = 8
length = 101


def get_inputs():
    return [torch.randn(batch, channels, length)]


def get_init_inputs():
    return [4, 3]
