import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Fused: a 3x3 convolution, ReLU, then a per-channel bias.
    """

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(64, 128, 3)
        self.bias = nn.Parameter(torch.randn(128, 1, 1) * 0.02)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.conv(x)) + self.bias


def get_inputs():
    return [torch.randn(16, 64, 64, 64)]


def get_init_inputs():
    return []
