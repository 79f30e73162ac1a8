"""Mean cross-entropy loss of class logits against integer targets."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits, targets)


BATCH, CLASSES = 16384, 1000


def get_inputs():
    return [torch.randn(BATCH, CLASSES) * 3.0, torch.randint(0, CLASSES, (BATCH,))]


def get_init_inputs():
    return []
