import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Fused: a linear layer, group normalisation, then x * sigmoid(x).
    """

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 128)
        self.norm = nn.GroupNorm(8, 128)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.norm(self.fc(x))
        return y * torch.sigmoid(y)


batch = 32


def get_inputs():
    return [torch.randn(batch, 64)]


def get_init_inputs():
    return []
