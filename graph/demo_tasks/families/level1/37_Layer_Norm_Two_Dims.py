import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Norm: layer normalisation over the last two dims, with affine weights.
    """

    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm((16, 32))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


batch = 8
channels = 4


def get_inputs():
    return [torch.randn(batch, channels, 16, 32)]


def get_init_inputs():
    return []
