import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Contraction written as einsum: every batch's rows times a shared matrix.
    """

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return torch.einsum("bij,jk->bik", x, w)


batch = 4
rows = 48
inner = 40
cols = 24


def get_inputs():
    return [torch.randn(batch, rows, inner), torch.randn(inner, cols)]


def get_init_inputs():
    return []
