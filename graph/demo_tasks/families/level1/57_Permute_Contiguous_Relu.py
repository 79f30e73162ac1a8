import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Layout: a permute made contiguous, then ReLU.
    """

    def __init__(self):
        super().__init__()
        pass

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x.permute(0, 2, 1).contiguous())


batch = 4
rows = 64
cols = 48


def get_inputs():
    return [torch.randn(batch, rows, cols)]


def get_init_inputs():
    return []
