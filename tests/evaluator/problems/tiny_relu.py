import torch
import torch.nn as nn


class Model(nn.Module):
    """Outputs below KernelBench's atol: a kernel returning zeros passes its check."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x) * 1e-5


def get_inputs():
    return [torch.rand(64, 256)]


def get_init_inputs():
    return []
