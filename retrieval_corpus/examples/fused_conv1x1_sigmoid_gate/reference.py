"""Spatial self-gating: x * sigmoid(conv1x1(x)) on an NCHW feature map."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """Returns x * sigmoid(W x + b) with a 1x1 convolution from channels to channels."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.gate = nn.Conv2d(channels, channels, kernel_size=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(self.gate(x))


batch_size = 16
channels = 64
height = width = 48


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs() -> list:
    return [channels]
