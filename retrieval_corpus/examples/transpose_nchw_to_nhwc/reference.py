"""NCHW -> NHWC layout conversion (channels-last copy) of an activation tensor."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """Returns x.permute(0, 2, 3, 1) as a new contiguous tensor."""

    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.permute(0, 2, 3, 1).contiguous()


batch_size = 16
channels = 96
height = 56
width = 56


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs() -> list:
    return []
