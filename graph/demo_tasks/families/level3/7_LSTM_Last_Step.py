import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Network: a one-layer LSTM, the last step through a linear head.
    """

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(16, 32, batch_first=True)
        self.head = nn.Linear(32, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(x)
        return self.head(out[:, -1, :])


batch = 4
steps = 10


def get_inputs():
    return [torch.randn(batch, steps, 16)]


def get_init_inputs():
    return []
