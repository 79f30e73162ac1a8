import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Network: a one-layer GRU over a sequence; the output at the last step, projected.
    """

    def __init__(self, features: int, hidden: int):
        super().__init__()
        self.gru = nn.GRU(features, hidden, batch_first=True)
        self.out = nn.Linear(hidden, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        seq, _ = self.gru(x)
        return self.out(seq[:, -1, :])


batch = 4
steps = 12
features = 10
hidden = 20


def get_inputs():
    return [torch.randn(batch, steps, features)]


def get_init_inputs():
    return [features, hidden]
