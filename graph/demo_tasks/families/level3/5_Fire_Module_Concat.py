import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Network: a SqueezeNet-style fire module (squeeze, two expands, concatenated).
    """

    def __init__(self):
        super().__init__()
        self.squeeze = nn.Conv2d(16, 4, 1)
        self.e1 = nn.Conv2d(4, 8, 1)
        self.e3 = nn.Conv2d(4, 8, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = torch.relu(self.squeeze(x))
        return torch.cat([torch.relu(self.e1(s)), torch.relu(self.e3(s))], dim=1)


batch = 2
side = 12


def get_inputs():
    return [torch.randn(batch, 16, side, side)]


def get_init_inputs():
    return []
