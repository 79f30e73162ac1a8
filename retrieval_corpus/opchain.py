"""The aten operator chain and input shapes of a KernelBench-format reference, traced on the meta device.

Used to prove that no corpus example solves a benchmark problem: two references that run the same aten
operators in the same order compute the same thing. Tracing on `meta` allocates no memory, so full
KernelBench sizes (and ResNet-101) trace in seconds on a CPU. Only trusted sources are traced (our own
examples and the KernelBench problems), never model output.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

# Ops that neither compute nor reorder data: dropped from every chain.
_NOOPS = frozenset({"detach", "alias", "lift_fresh", "lift_fresh_copy", "_to_copy", "empty", "empty_like"})
# Ops that only re-describe or re-lay-out data: dropped from the compute chain.
_LAYOUT = frozenset(
    {
        "view",
        "_unsafe_view",
        "reshape",
        "expand",
        "t",
        "transpose",
        "permute",
        "unsqueeze",
        "squeeze",
        "contiguous",
        "clone",
        "as_strided",
        "slice",
        "select",
        "flatten",
        "copy_",
        "copy",
    }
)


@dataclass(frozen=True)
class OpChain:
    ops: tuple[str, ...]  # every aten op the forward ran, in order (no-ops dropped)
    input_shapes: tuple[tuple[int, ...] | None, ...]  # None for non-tensor inputs

    @property
    def compute_ops(self) -> tuple[str, ...]:
        """The chain without layout ops: the same computation written with different plumbing matches."""
        return tuple(op for op in self.ops if op not in _LAYOUT)


class _Recorder(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.ops: list[str] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        name = func.overloadpacket.__name__
        if name not in _NOOPS:
            self.ops.append(name)
        return func(*args, **(kwargs or {}))


def trace(source: str, name: str = "reference") -> OpChain:
    """Build Model(*get_init_inputs()) and run forward(*get_inputs()) on `meta`, recording aten ops."""
    namespace: dict[str, Any] = {"__name__": f"_opchain_{name}"}
    exec(compile(source, name, "exec"), namespace)  # noqa: S102 - trusted sources only, see module doc
    torch.manual_seed(0)
    with torch.device("meta"):
        model = namespace["Model"](*namespace["get_init_inputs"]())
        inputs = list(namespace["get_inputs"]())
    recorder = _Recorder()
    with torch.no_grad(), recorder:
        model(*inputs)
    shapes = tuple(tuple(x.shape) if isinstance(x, torch.Tensor) else None for x in inputs)
    return OpChain(ops=tuple(recorder.ops), input_shapes=shapes)


def same_problem(a: OpChain, b: OpChain) -> str | None:
    """Why `a` solves `b` (or None): the same full chain, or the same computation on the same shapes."""
    if a.ops == b.ops:
        return f"identical operator chain {list(a.ops)}"
    if a.compute_ops == b.compute_ops and a.input_shapes == b.input_shapes:
        return f"same computation {list(a.compute_ops)} on the same input shapes {list(a.input_shapes)}"
    return None
