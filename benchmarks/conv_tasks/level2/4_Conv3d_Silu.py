import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Fused: a 3-D convolution then SiLU (x times its sigmoid).
    """

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(16, 48, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.silu(self.conv(x))


def get_inputs():
    return [torch.randn(8, 16, 16, 32, 32)]


def get_init_inputs():
    return []
