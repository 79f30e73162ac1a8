import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Network with data-dependent control flow: which layer runs depends on the input's mean.
    """

    def __init__(self, features: int):
        super().__init__()
        self.a = nn.Linear(features, features)
        self.b = nn.Linear(features, features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.mean() > 0:
            return torch.relu(self.a(x))
        return torch.tanh(self.b(x))


batch = 16
features = 64


def get_inputs():
    return [torch.randn(batch, features)]


def get_init_inputs():
    return [features]
