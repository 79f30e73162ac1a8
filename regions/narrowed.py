"""A product or convolution region narrowed on its own: the same steps on smaller operands, for the CPU
emulation where shrinking the problem cannot reach the region.

regions.emulate first shrinks the whole problem (its module-level sizes), which leaves alone every size
written into get_inputs or a network's layers: an image side of 224, a ResNet's 64 to 512 channels, an MLP's
16384 features. Those regions' first contracts had no CPU check at all (69 of 371 regions of the shared 30
at both cuts, GoogleNet and ResNet101 left out; 62 of them convolutions or linear layers), and a body that
indexed a raw pointer with the wrong strides reached the GPU (benchmarks/results/autotune_interleaved).

Here the region's core keeps what its body's loops run over (a convolution's input channels and kernel, a
product's K) and loses what only multiplies the outputs: a convolution's batch and spatial sides, a
product's batch, rows and columns. Every other input follows the output by PyTorch's own broadcasting
(a residual of the output's shape shrinks with it, a per-channel bias does not). The step outputs' shapes
come from running the steps on the meta device; the caller keeps a narrowed region only where its skeleton
is the original's but for its numbers.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import torch

from regions.contraction import CONV, MATMUL
from regions.model import Region, Step
from regions.partition import contraction_flops

SIDES = (4, 8, 16, 32)  # a convolution's spatial side, or a product's rows and columns, tried in turn
BATCH = 2  # batch dimensions at most: two, so that a body's batch index is exercised
_OPERANDS = MATMUL | {"torch.addmm", "torch.baddbmm"}

Shapes = dict[str, tuple[int, ...]]


def narrowed_regions(region: Region) -> Iterator[Region]:
    """The contraction region on smaller operands, smallest first; nothing for any other kind or where
    the steps do not run on the narrowed shapes."""
    if region.kind != "contraction":
        return
    for side in SIDES:
        core = _core_shapes(region, side)
        if core is None:
            continue
        twin = _propagated(region, core)
        if twin is not None and _exercised(region.output.shape, twin.output.shape):
            yield twin


def _exercised(before: tuple[int, ...], after: tuple[int, ...]) -> bool:
    """Whether the narrowed output is smaller and still has two or more indices along every dim that had:
    a 1 x 1 output (an 11 x 11 kernel of stride 4 on an 8 x 8 side) would never test a body's indexing."""
    return after != before and all(a > 1 or b == 1 for a, b in zip(after, before, strict=True))


def _core_shapes(region: Region, side: int) -> Shapes | None:
    """The narrowed shapes of the core step's operands (its first step), or None where it has none."""
    step = region.steps[0]
    shapes = {t.name: t.shape for t in region.inputs}
    args = [a for a in step.args if a in shapes]
    if step.target in CONV and args:
        x = shapes[args[0]]  # (N, C, *spatial): the channels and the kernel stay, the sides shrink
        return {args[0]: (min(x[0], BATCH), x[1], *(min(s, side) for s in x[2:]))}
    if step.target == "torch.nn.functional.linear" and len(args) >= 2:
        x, w = shapes[args[0]], shapes[args[1]]  # (..., K) and (N, K): K stays
        rows = (*(min(d, BATCH) for d in x[:-2]), min(x[-2], side)) if len(x) > 1 else ()
        out = {args[0]: (*rows, x[-1]), args[1]: (min(w[0], side), w[1])}
        if len(args) > 2:
            out[args[2]] = (min(w[0], side),)
        return out
    if step.target in _OPERANDS:
        a, b = args[-2:] if len(args) >= 2 else (None, None)
        if a is None or b is None:
            return None
        out = {a: _rows(shapes[a], side, last=False), b: _rows(shapes[b], side, last=True)}
        if step.target in ("torch.addmm", "torch.baddbmm") and len(args) == 3:  # the added term
            m, n = shapes[a][-2], shapes[b][-1]
            bias = shapes[args[0]]
            sizes = [*(min(d, BATCH) for d in bias[:-2]), *bias[-2:]]
            for at, (was, now) in zip((-1, -2), ((n, min(n, side)), (m, min(m, side))), strict=True):
                if len(sizes) >= -at and sizes[at] == was and was != 1:
                    sizes[at] = now
            out[args[0]] = tuple(sizes)
        return out
    return None


def _rows(shape: tuple[int, ...], side: int, last: bool) -> tuple[int, ...]:
    """A matrix operand with its batch dims at most BATCH and its rows (A) or columns (B) at most `side`;
    K and a vector stay."""
    if len(shape) < 2:
        return shape
    batch = tuple(min(d, BATCH) for d in shape[:-2])
    m, n = shape[-2:]
    return (*batch, m, min(n, side)) if last else (*batch, min(m, side), n)


def _propagated(region: Region, core: Shapes) -> Region | None:
    """The region with the core's narrowed operands, every input outside the core following the core's
    output (_follow), and each step's output shape from the meta device; None where a step does not run."""
    first = region.steps[0]
    try:
        core_out = _run(first, {t.name: core.get(t.name, t.shape) for t in region.inputs}, region)
        shapes = {
            t.name: core.get(t.name, t.shape)
            if t.name in first.args
            else _follow(t.shape, first.out.shape, core_out)
            for t in region.inputs
        }
        known = dict(shapes)
        for step in region.steps:
            known[step.out.name] = _run(step, known, region)
    except (RuntimeError, ValueError, TypeError, IndexError):
        return None
    inputs = [replace(t, shape=shapes[t.name]) for t in region.inputs]
    steps = [replace(s, out=replace(s.out, shape=known[s.out.name])) for s in region.steps]
    output = replace(region.output, shape=known[region.output.name])
    return replace(
        region, inputs=inputs, output=output, steps=steps, cost=contraction_flops(steps[0], inputs)
    )


def _follow(shape: tuple[int, ...], before: tuple[int, ...], after: tuple[int, ...]) -> tuple[int, ...]:
    """An input outside the core, aligned to the core's output from the right as PyTorch broadcasts it:
    each of its dims that was the output's takes the output's new size; a broadcast 1 stays."""
    lead = len(shape) - len(before)
    return tuple(
        after[i - lead] if i >= lead and d == before[i - lead] and d != 1 else d for i, d in enumerate(shape)
    )


def _run(step: Step, shapes: Shapes, region: Region) -> tuple[int, ...]:
    """The step's output shape on the meta device, its inputs of `shapes` (the trace's own code line)."""
    scope: dict[str, Any] = {"torch": torch}
    scope.update({name: torch.empty(shape, device="meta") for name, shape in shapes.items()})
    scope.update({name: 0.5 if value is None else value for name, value in region.scalars})
    exec(step.code, scope)  # noqa: S102 - the trace's own rendering of the reference, on meta tensors
    value = scope[step.out.name]
    return tuple(int(d) for d in value.shape)
