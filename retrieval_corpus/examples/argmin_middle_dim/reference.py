"""Argmin over the middle (channel) dimension of a (batch, channels, length) tensor."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """Returns torch.argmin(x, dim=1): for every (batch, position) the channel with the smallest value."""

    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.argmin(x, dim=1)


batch_size = 32
channels = 512
length = 1000


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs() -> list:
    return []
