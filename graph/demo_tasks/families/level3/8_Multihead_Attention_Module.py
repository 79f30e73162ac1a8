import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Network: nn.MultiheadAttention over a sequence, then layer norm.
    """

    def __init__(self):
        super().__init__()
        self.att = nn.MultiheadAttention(32, 4, batch_first=True)
        self.norm = nn.LayerNorm(32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y, _ = self.att(x, x, x)
        return self.norm(x + y)


batch = 2
steps = 12


def get_inputs():
    return [torch.randn(batch, steps, 32)]


def get_init_inputs():
    return []
