"""Cosine-similarity loss between paired embeddings: mean over the batch of 1 - cos(a_i, b_i)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.mean(1.0 - F.cosine_similarity(a, b, dim=1))


BATCH, DIM = 16384, 1024


def get_inputs():
    return [torch.randn(BATCH, DIM), torch.randn(BATCH, DIM) + 0.2]


def get_init_inputs():
    return []
