import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Fused: a convolution, a 2x2 max pooling, then ReLU.
    """

    def __init__(self, cin: int, cout: int):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.pool(self.conv(x)))


batch = 2
cin = 3
cout = 8
side = 26


def get_inputs():
    return [torch.randn(batch, cin, side, side)]


def get_init_inputs():
    return [cin, cout]
