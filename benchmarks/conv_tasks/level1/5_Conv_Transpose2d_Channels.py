import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Convolution: transposed 2-D, kernel 4, stride 2, 64 to 32 channels, no bias.
    """

    def __init__(self):
        super().__init__()
        self.conv = nn.ConvTranspose2d(64, 32, 4, stride=2, padding=1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(16, 64, 48, 48)]


def get_init_inputs():
    return []
