"""The data of the region pipeline: traced tensors, steps and regions (plain, JSON-friendly dataclasses)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal, get_args

Kind = Literal["map", "reduce", "window", "contraction", "kept"]
# How much of a model is offered to the model: the one definition (nodes.context's knob reuses it).
Ambition = Literal["conservative", "moderate", "aggressive"]
AMBITIONS: tuple[str, ...] = get_args(Ambition)


class RegionError(ValueError):
    """A problem that cannot be cut into regions; the message says why (the caller falls back to whole
    programs)."""


@dataclass(frozen=True)
class TensorInfo:
    """A tensor of the traced graph: its fx node name, shape and dtype (torch's name, e.g. 'float32')."""

    name: str
    shape: tuple[int, ...]
    dtype: str

    @property
    def numel(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n


@dataclass(frozen=True)
class Step:
    """One op of a region, as the model reads it: `t3 = x + bias` with the functional call spelled out.

    `target` is the op's canonical functional name (e.g. 'torch.add', 'torch.nn.functional.gelu',
    'torch.matmul', 'torch.softmax'); `args` are the rendered arguments (tensor names or literals) and
    `kwargs` the keyword arguments as literals, so `code` reads `out = torch.clamp(t2, min=0.0, max=1.0)`.
    """

    out: TensorInfo
    target: str
    args: tuple[str, ...]
    kwargs: tuple[tuple[str, Any], ...] = ()
    code: str = ""


@dataclass
class Region:
    """A piece of the traced reference that one kernel computes.

    `inputs` are the tensors it reads (graph inputs, parameters and buffers, or outputs of other regions),
    in signature order; `scalars` the forward's Python-number inputs it reads (name, value when traced:
    float32 kernel arguments; constants the trace baked in stay literals in the steps); `output` the one
    tensor it produces. `steps` run in order, each reading inputs, scalars or earlier steps. `cost`
    estimates its work (bytes moved + flops) so the costliest region can be offered first.
    """

    id: str
    kind: Kind
    nodes: list[str]
    inputs: list[TensorInfo]
    output: TensorInfo
    steps: list[Step]
    scalars: list[tuple[str, float]] = field(default_factory=list)
    cost: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
