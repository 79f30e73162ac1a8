import torch
import torch.nn as nn


class Model(nn.Module):
    """ReLU: on KernelBench's [0, 1) inputs the identity passes; only signed inputs tell them apart."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def get_inputs():
    return [torch.rand(64, 256)]


def get_init_inputs():
    return []
