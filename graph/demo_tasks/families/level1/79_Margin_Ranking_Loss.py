import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """
    Loss: margin ranking.
    """

    def __init__(self):
        super().__init__()
        pass

    def forward(self, a, b, y) -> torch.Tensor:
        return F.margin_ranking_loss(a, b, y, margin=0.2)


n = 256


def get_inputs():
    return [torch.randn(n), torch.randn(n), torch.randint(0, 2, (n,)).float() * 2 - 1]


def get_init_inputs():
    return []
