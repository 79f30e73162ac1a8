import torch
import torch.nn as nn


class Model(nn.Module):
    """Softmax over each row. A row-block kernel (one block a row: max, sum of exps, write) does it; one
    without the max subtraction is right on [0, 1) and gives inf / inf = NaN once an input passes ~88.7."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


batch_size = 256
dim = 4096


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return []
