"""A region narrowed on its own: the same steps on smaller operands, for the CPU emulation where shrinking
the problem cannot reach the region.

regions.emulate first shrinks the whole problem (its module-level sizes), which leaves alone every size
written into get_inputs or a network's layers: an image side of 224, a ResNet's 64 to 512 channels, an MLP's
16384 features. Those regions' first contracts had no CPU check at all (69 of 371 regions of the shared 30
at both cuts, GoogleNet and ResNet101 left out; 62 of them convolutions or linear layers), and a body that
indexed a raw pointer with the wrong strides reached the GPU (benchmarks/results/autotune_interleaved).

A product or convolution keeps what its body's loops run over (a convolution's input channels and kernel,
a product's K) and loses what only multiplies the outputs: a convolution's batch and spatial sides, a
product's batch, rows and columns. Any other region is led by its widest input: its batch and then every
other dim, or only its channels where a long reduced axis must keep its length. Every other input follows
by PyTorch's own broadcasting (a residual of the output's shape shrinks with it, a per-channel bias keeps
its 1s). The step outputs' shapes come from running the steps on the meta device; the caller keeps a
narrowed region only where its skeleton is the original's but for its numbers.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import torch

from regions.contraction import CONV, MATMUL
from regions.model import Region, Step
from regions.partition import region_cost

SIDES = (4, 8, 16, 32)  # a side, channels, rows or columns at most, tried in turn
BATCH = 2  # batch dimensions at most: two, so that a body's batch index is exercised
_OPERANDS = MATMUL | {"torch.addmm", "torch.baddbmm"}

Shapes = dict[str, tuple[int, ...]]


def narrowed_regions(region: Region) -> Iterator[Region]:
    """The region on smaller operands, smallest first; nothing where its steps do not run on them."""
    kept = _literal_sizes(region)
    for side in SIDES:
        if region.kind == "contraction":
            core = _core_shapes(region, side)
            twins = [] if core is None else [_propagated(region, _keeping(region, core, kept))]
        else:
            twins = [_led(region, side, every, kept) for every in (True, False)]
        for twin in twins:
            if twin is not None and _exercised(region.output.shape, twin.output.shape):
                yield twin


def _literal_sizes(region: Region) -> set[int]:
    """Sizes a step's number may stand for: n where it is n, 1/n, sqrt(n) or 1/sqrt(n) (an attention's
    scale of 1/sqrt(head size), a mean written as a product with 1/n). A body shown the number may compute
    it from the size instead, and would be wrong on a twin where that size shrank, so such dims keep
    their length."""
    sizes: set[int] = set()
    for step in region.steps:
        for value in (*step.args, *(v for _, v in step.kwargs)):
            try:
                number = abs(float(value))
            except (TypeError, ValueError):
                continue
            if number in (0.0, float("inf")) or number != number:
                continue
            for n in (number, 1 / number, number * number, 1 / (number * number)):
                if n >= 2 and abs(n - round(n)) <= 1e-4 * n:
                    sizes.add(round(n))
    return sizes


def _keeping(region: Region, core: Shapes, kept: set[int]) -> Shapes:
    """`core` with every dim whose length is one of `kept` at its length again."""
    shapes = {t.name: t.shape for t in region.inputs}
    return {
        name: tuple(d if d in kept else n for d, n in zip(shapes[name], narrow, strict=True))
        for name, narrow in core.items()
    }


def _led(region: Region, side: int, every: bool, kept: set[int]) -> Region | None:
    """A map, reduction, scan or window narrowed by its widest input: its batch at most BATCH and each
    other dim (with `every`; else only the next one, the channels, so that a long reduced axis keeps the
    double sum its skeleton declares) at most `side`, every other input following that one as PyTorch
    broadcasts it. Where a step's arguments name a narrowed size (a layer norm's normalized shape) the
    step no longer runs, and that narrowing is left out."""
    if not region.inputs:
        return None
    lead = max(region.inputs, key=lambda t: t.numel)
    shape = lead.shape
    if len(shape) < 2:
        return None
    rest = shape[1:] if every else shape[1:2]
    narrow = (min(shape[0], BATCH), *(min(d, side) for d in rest), *shape[1 + len(rest) :])
    core = _keeping(region, {lead.name: narrow}, kept)
    return _propagated(region, core, (shape, core[lead.name]))


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


def _propagated(
    region: Region, core: Shapes, lead: tuple[tuple[int, ...], tuple[int, ...]] | None = None
) -> Region | None:
    """The region with `core`'s narrowed inputs and each step's output shape from the meta device; None
    where a step does not run. Every other input follows (_follow) the core's output, or with `lead` (a
    shape before and after) that input; a contraction's own operands keep theirs."""
    first, rest = region.steps[0], region.steps[1:]
    try:
        known: Shapes = {}
        if lead is None:  # the core step reads only its own operands: its output leads the others
            before = first.out.shape
            after = _run(first, {t.name: core.get(t.name, t.shape) for t in region.inputs}, region)
            known[first.out.name], kept = after, set(first.args)
        else:
            (before, after), kept, rest = lead, set(), region.steps
        shapes = {
            t.name: core.get(t.name, t.shape)
            if t.name in kept or t.name in core
            else _follow(t.shape, before, after)
            for t in region.inputs
        }
        known |= shapes
        for step in rest:
            known[step.out.name] = _run(step, known, region)
    except (RuntimeError, ValueError, TypeError, IndexError):
        return None
    inputs = [replace(t, shape=shapes[t.name]) for t in region.inputs]
    steps = [replace(s, out=replace(s.out, shape=known[s.out.name])) for s in region.steps]
    output = replace(region.output, shape=known[region.output.name])
    return replace(
        region,
        inputs=inputs,
        output=output,
        steps=steps,
        cost=region_cost(region.kind, steps, inputs, output),
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
