import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Fused: a transposed 2-D convolution, then GELU.
    """

    def __init__(self):
        super().__init__()
        self.conv = nn.ConvTranspose2d(64, 64, 4, stride=2, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(self.conv(x))


def get_inputs():
    return [torch.randn(16, 64, 32, 32)]


def get_init_inputs():
    return []
