import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Network: two conv / batch norm / ReLU / max pool stages, global average pooling, a classifier.
    """

    def __init__(self, classes: int):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1),
            nn.BatchNorm2d(8),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1),
            nn.BatchNorm2d(16),
            nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Linear(16, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.flatten(self.pool(self.features(x)), 1))


batch = 4
classes = 10
side = 32


def get_inputs():
    return [torch.randn(batch, 3, side, side)]


def get_init_inputs():
    return [classes]
