import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Product: batched product with the second operand transposed.
    """

    def __init__(self):
        super().__init__()
        pass

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.bmm(a, b.transpose(1, 2))


batch = 4
m = 32
k = 48
n = 40


def get_inputs():
    return [torch.randn(batch, m, k), torch.randn(batch, n, k)]


def get_init_inputs():
    return []
