import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Contraction: a 2D transposed convolution that doubles the spatial size.
    """

    def __init__(self, cin: int, cout: int):
        super().__init__()
        self.up = nn.ConvTranspose2d(cin, cout, 4, stride=2, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.up(x)


batch = 2
cin = 8
cout = 6
side = 12


def get_inputs():
    return [torch.randn(batch, cin, side, side)]


def get_init_inputs():
    return [cin, cout]
