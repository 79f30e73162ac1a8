import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """
    Fused: a linear layer with bias, then GELU.
    """

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2048, 4096)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(self.fc(x))


def get_inputs():
    return [torch.randn(512, 2048)]


def get_init_inputs():
    return []
