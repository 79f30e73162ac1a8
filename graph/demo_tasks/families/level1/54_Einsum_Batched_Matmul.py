import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Product: einsum over a batch of matrices.
    """

    def __init__(self):
        super().__init__()
        pass

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.einsum("bij,bjk->bik", a, b)


batch = 4
m = 32
k = 48
n = 40


def get_inputs():
    return [torch.randn(batch, m, k), torch.randn(batch, k, n)]


def get_init_inputs():
    return []
