import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Window: 2-D max pooling with dilation and ceil mode.
    """

    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(3, stride=2, dilation=2, ceil_mode=True)

    def forward(self, x) -> torch.Tensor:
        return self.pool(x)


batch = 2
side = 21


def get_inputs():
    return [torch.randn(batch, 4, side, side)]


def get_init_inputs():
    return []
