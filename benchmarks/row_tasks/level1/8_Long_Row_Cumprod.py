import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Scan: the running product along rows of 32,768 elements near 1, 128 rows.
    """

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumprod(x, dim=1)


def get_inputs():
    return [1.0 + 0.0001 * torch.randn(128, 32768)]


def get_init_inputs():
    return []
