import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """
    Network: a pre-norm transformer block (causal self-attention, GELU MLP).
    """

    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(32)
        self.qkv = nn.Linear(32, 96)
        self.proj = nn.Linear(32, 32)
        self.ln2 = nn.LayerNorm(32)
        self.fc1 = nn.Linear(32, 128)
        self.fc2 = nn.Linear(128, 32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(32, dim=2)
        q = q.view(b, t, 4, 8).transpose(1, 2)
        k = k.view(b, t, 4, 8).transpose(1, 2)
        v = v.view(b, t, 4, 8).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) / 8**0.5
        mask = torch.tril(torch.ones(t, t, device=x.device)).view(1, 1, t, t)
        att = torch.softmax(att.masked_fill(mask == 0, float("-inf")), dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
        x = x + self.proj(y)
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


batch = 2
steps = 16


def get_inputs():
    return [torch.randn(batch, steps, 32)]


def get_init_inputs():
    return []
