import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Window: 3-D max pooling with padding and stride.
    """

    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool3d(kernel_size=3, stride=2, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


batch = 2
channels = 4
side = 16


def get_inputs():
    return [torch.randn(batch, channels, side, side, side)]


def get_init_inputs():
    return []
