import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Fused: two linear layers each with ReLU, then a linear layer alone (its bias kept).
    """

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(2048, 2048), nn.ReLU(), nn.Linear(2048, 2048), nn.ReLU(), nn.Linear(2048, 1024)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def get_inputs():
    return [torch.randn(256, 2048)]


def get_init_inputs():
    return []
