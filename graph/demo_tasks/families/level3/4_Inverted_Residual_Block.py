import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """
    Network: a MobileNet-style inverted residual (expand, depthwise, project, add).
    """

    def __init__(self):
        super().__init__()
        self.expand = nn.Conv2d(8, 32, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(32)
        self.dw = nn.Conv2d(32, 32, 3, padding=1, groups=32, bias=False)
        self.bn2 = nn.BatchNorm2d(32)
        self.project = nn.Conv2d(32, 8, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu6(self.bn1(self.expand(x)))
        y = F.relu6(self.bn2(self.dw(y)))
        return x + self.bn3(self.project(y))


batch = 2
side = 16


def get_inputs():
    return [torch.randn(batch, 8, side, side)]


def get_init_inputs():
    return []
