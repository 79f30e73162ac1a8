"""SwiGLU gate: one Linear producing value and gate halves, then silu(value) * gate."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Returns silu(a) * g where a, g = (x @ W^T + b).chunk(2, dim=-1)."""

    def __init__(self, in_features: int, hidden: int) -> None:
        super().__init__()
        self.proj = nn.Linear(in_features, 2 * hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a, g = self.proj(x).chunk(2, dim=-1)
        return F.silu(a) * g


batch_size = 256
in_features = 1024
hidden = 1536


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(batch_size, in_features)]


def get_init_inputs() -> list:
    return [in_features, hidden]
