import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """
    Network: a stack of linear + GELU layers run in a Python loop.
    """

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(32, 32) for _ in range(4)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = F.gelu(layer(x))
        return x


batch = 16


def get_inputs():
    return [torch.randn(batch, 32)]


def get_init_inputs():
    return []
