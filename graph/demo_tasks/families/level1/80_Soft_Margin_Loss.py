import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """
    Loss: soft margin.
    """

    def __init__(self):
        super().__init__()
        pass

    def forward(self, a, y) -> torch.Tensor:
        return F.soft_margin_loss(a, y)


n = 256


def get_inputs():
    return [torch.randn(n), torch.randint(0, 2, (n,)).float() * 2 - 1]


def get_init_inputs():
    return []
