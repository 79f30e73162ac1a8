"""U-Net style decoder step: ConvTranspose2d upsampling -> LeakyReLU -> add the encoder skip tensor."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Returns leaky_relu(conv_transpose2d(x), 0.2) + skip; the transposed conv doubles H and W."""

    def __init__(self, in_channels: int, out_channels: int) -> None:
        super().__init__()
        self.up = nn.ConvTranspose2d(in_channels, out_channels, kernel_size=4, stride=2, padding=1)

    def forward(self, x: torch.Tensor, skip: torch.Tensor) -> torch.Tensor:
        return F.leaky_relu(self.up(x), negative_slope=0.2) + skip


batch_size = 8
in_channels = 32
out_channels = 16
height = width = 32


def get_inputs() -> list[torch.Tensor]:
    x = torch.randn(batch_size, in_channels, height, width)
    skip = torch.randn(batch_size, out_channels, 2 * height, 2 * width)
    return [x, skip]


def get_init_inputs() -> list:
    return [in_channels, out_channels]
