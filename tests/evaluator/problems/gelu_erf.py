import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """GELU with erf (PyTorch's default). The tanh approximation is off by up to 1.5e-4 near |x| = 1: within
    atol + rtol * |y| on [0, 1) (gelu(1) = 0.84), outside it near x = -1 (gelu(-1) = -0.16)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x)


batch_size = 256
dim = 4096


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return []
