import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Fused: a 3-D convolution with 16 output channels (a narrow tile), then ReLU.
    """

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(8, 16, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.conv(x))


def get_inputs():
    return [torch.randn(16, 8, 16, 48, 48)]


def get_init_inputs():
    return []
