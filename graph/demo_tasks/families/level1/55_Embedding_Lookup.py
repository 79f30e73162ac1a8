import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Gather: an embedding table read at integer ids.
    """

    def __init__(self):
        super().__init__()
        self.table = nn.Embedding(100, 32)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.table(ids)


batch = 16
steps = 12


def get_inputs():
    return [torch.randint(0, 100, (batch, steps))]


def get_init_inputs():
    return []
