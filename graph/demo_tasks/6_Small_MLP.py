import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A small MLP: Linear -> ReLU -> Linear -> ReLU -> Linear.

    Batch small enough that launch overhead and the two activations matter next to the GEMMs.
    """

    def __init__(self, in_features: int, hidden: int, out_features: int):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(in_features, hidden),
            nn.ReLU(),
            nn.Linear(hidden, hidden),
            nn.ReLU(),
            nn.Linear(hidden, out_features),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


batch = 32
in_features = 256
hidden = 512
out_features = 64


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, hidden, out_features]
