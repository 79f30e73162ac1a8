"""3-D residual branch on a volume: x + 0.5 * ELU(Conv3d(x)) with a 'same' 3x3x3 convolution."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Returns x + branch_scale * elu(conv3d(x)); the convolution keeps channels and spatial size."""

    def __init__(self, channels: int, branch_scale: float) -> None:
        super().__init__()
        self.conv = nn.Conv3d(channels, channels, kernel_size=3, padding=1)
        self.branch_scale = branch_scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.branch_scale * F.elu(self.conv(x))


batch_size = 4
channels = 16
depth = 24
height = width = 32
branch_scale = 0.5


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(batch_size, channels, depth, height, width)]


def get_init_inputs() -> list:
    return [channels, branch_scale]
