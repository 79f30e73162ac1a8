"""A linear layer applied to a single vector (batch-1 inference): y = W x + b."""
import torch
import torch.nn as nn


class Model(nn.Module):
    """nn.Linear on a 1-D input of in_features values."""

    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x)


in_features = 4096
out_features = 6144


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(in_features)]


def get_init_inputs() -> list:
    return [in_features, out_features]
