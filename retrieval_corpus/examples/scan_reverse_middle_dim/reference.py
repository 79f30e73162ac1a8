"""Reverse (suffix) cumulative sum over the time axis of a (batch, time, features) tensor."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """out[b, t, f] = sum over t' >= t of x[b, t', f] (reward-to-go style suffix sum)."""

    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.flip(torch.cumsum(torch.flip(x, dims=[1]), dim=1), dims=[1])


batch_size = 64
time_steps = 512
features = 256


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(batch_size, time_steps, features)]


def get_init_inputs() -> list:
    return []
