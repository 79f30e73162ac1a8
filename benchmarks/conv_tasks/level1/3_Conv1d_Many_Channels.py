import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Convolution: 1-D, kernel 3, 128 to 256 channels, no bias.
    """

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(128, 256, 3, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(32, 128, 1024)]


def get_init_inputs():
    return []
