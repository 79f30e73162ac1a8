import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Softmax: log-softmax over the middle dim of a 3-D tensor.
    """

    def __init__(self):
        super().__init__()
        pass

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(x, dim=1)


batch = 4
middle = 50
last = 60


def get_inputs():
    return [torch.randn(batch, middle, last)]


def get_init_inputs():
    return []
