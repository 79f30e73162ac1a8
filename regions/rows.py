"""Where a reduction's rows lie: the reduced dims of a step (`dim=`, a list of them, none, or a layer norm's
last ones), merged where neighbours are of one sort, and the C expressions of a row's start and of its k-th
element. One arithmetic for every reader of rows: the reduce kind's skeleton and the block-per-row shape.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from math import prod

from regions.model import RegionError, Step


@dataclass(frozen=True)
class Rows:
    """Where a reduction's rows and their elements lie in a contiguous input: `rows` rows of `length`
    elements; `base` is the C expression of row i's first element, `at(k)` that of its k-th element's
    offset from it."""

    rows: int
    length: int
    base: str
    strides: tuple[tuple[int, int], ...]  # the reduced dims, outermost first: (size, stride), merged

    def at(self, k: str) -> str:
        if len(self.strides) == 1:
            return f"{k} * {self.strides[0][1]}"
        return " + ".join(_digit(k, self.strides, j) for j in range(len(self.strides)))


def rows_of(step: Step, shape: tuple[int, ...]) -> Rows:
    """The row layout of a one-input reduction over `shape`; RegionError for a dim it cannot read."""
    dims = reduced_dims(step, shape)
    groups = _merged(shape, dims)
    reduced = tuple((size, stride) for size, stride, is_reduced in groups if is_reduced)
    kept = tuple((size, stride) for size, stride, is_reduced in groups if not is_reduced)
    length, rows = prod(s for s, _ in reduced), prod(s for s, _ in kept)
    if len(reduced) == 1 and len(kept) <= 2:  # one span: the classic (outer, R, inner) row
        inner = reduced[0][1]
        return Rows(rows, length, f"(i / {inner}) * {length * inner} + i % {inner}", reduced)
    base = " + ".join(_digit("i", kept, j) for j in range(len(kept))) or "0"
    return Rows(rows, length, base, reduced)


def reduced_dims(step: Step, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The reduced dims, ascending: `dim=` (one, a list, negative allowed, none = all) or layer_norm's last
    ones."""
    kwargs = dict(step.kwargs)
    rank = len(shape)
    if step.target == "torch.nn.functional.layer_norm":
        normalized = kwargs.get("normalized_shape") or (step.args[1] if len(step.args) > 1 else None)
        count = len(normalized) if isinstance(normalized, list | tuple) else 1
        return tuple(range(rank - count, rank))
    dim = kwargs.get("dim", step.args[1] if len(step.args) > 1 else None)
    if isinstance(dim, str):  # a positional argument, rendered as its literal
        try:
            dim = ast.literal_eval(dim)
        except (ValueError, SyntaxError) as exc:
            raise RegionError(f"a reduction over dim {dim} has no contract") from exc
    if dim is None or dim == [] or dim == ():
        return tuple(range(rank))  # over everything
    listed = dim if isinstance(dim, list | tuple) else [dim]
    try:
        picked = sorted({int(d) % rank for d in listed})
    except (TypeError, ValueError) as exc:
        raise RegionError(f"a reduction over dim {dim!r} has no contract") from exc
    if len(picked) != len(listed):
        raise RegionError(f"a reduction over dims {dim} has no contract yet")
    return tuple(picked)


def _merged(shape: tuple[int, ...], dims: tuple[int, ...]) -> list[tuple[int, int, bool]]:
    """(size, stride, reduced) per run of neighbouring dims of one sort, size-1 dims dropped, outermost
    first: dims 2 and 3 of a contiguous tensor read as one dim of size H * W."""
    groups: list[tuple[int, int, bool]] = []
    stride = 1
    for d in range(len(shape) - 1, -1, -1):
        size, reduced = shape[d], d in dims
        if size != 1:
            if groups and groups[-1][2] == reduced:
                inner_size, inner_stride, _ = groups[-1]
                groups[-1] = (size * inner_size, inner_stride, reduced)
            else:
                groups.append((size, stride, reduced))
        stride *= size
    if not any(r for _, _, r in groups):  # every reduced dim has size 1: a row of one element
        groups.append((1, stride, True))
    return groups[::-1]


def _digit(var: str, dims: tuple[tuple[int, int], ...], j: int) -> str:
    """The offset dim j of `dims` contributes for the flat index `var` over them (row-major)."""
    size, stride = dims[j]
    below = prod(s for s, _ in dims[j + 1 :])
    term = f"({var})" if any(c in var for c in " +*") else var
    if below != 1:
        term = f"({term} / {below})"
    if j > 0:
        term = f"({term} % {size})"
    return term if stride == 1 else f"{term} * {stride}"
