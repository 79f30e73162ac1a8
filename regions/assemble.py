"""Assembly: a region candidate put together from the bodies written for its offered regions.

Everything here is the framework's, with no model call: which launch a region runs on this round (its first
contract, or the launch shape the fast second moved it to), a correct body moved unchanged to a new shape,
a twin's body renamed from the twin written first, and the program that carries the kernels (the
evaluator's region kind, NVRTC) with the job line's region markers. The graph's region writer asks the
model only where none of these gives the body.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any, TypedDict

from evaluator.problem import problem_from_dict
from regions.check import check
from regions.contract import Contract
from regions.export import Launcher, Written, export_program, region_markers
from regions.model import Region, RegionError
from regions.prologue import Fused, fused_prologues
from regions.row_maps import RowMaps, fused_row_maps
from regions.shapes import FIRST, moves_unchanged, shaped, shapes_for
from regions.trace import trace_source
from regions.twins import rename_body, twin_key


class Twin(TypedDict):
    """A body written this candidate, kept so its twins take it renamed: the region it was written for and
    that region's input names in signature order."""

    region: str
    names: list[str]
    body: str


def launch_for(region: Region, first: Contract, route: str, on: str) -> tuple[Contract, str] | None:
    """The contract a region is written against this round and the launch shape it runs on ("" for its
    first contract's); None where the fast second lets the model choose among the shapes that fit.

    A region moved to a shape stays on it while it is right or being made faster (`on` is the shape it ran
    on last round); if the GPU found it wrong there, it is repaired on its first contract."""
    if on and route in ("keep", "optimise"):
        try:
            return shaped(region, on), on
        except RegionError:
            return first, ""
    if on or route != "optimise" or not shapes_for(region):
        return first, ""
    return None


def chosen_launch(region: Region, first: Contract, shape: str) -> tuple[Contract, str]:
    """The contract and shape name of the model's choice (FIRST keeps the first contract's launch)."""
    if shape == FIRST:
        return first, ""
    return next(c for s, c in shapes_for(region) if s.name == shape), shape


def moved_unchanged(contract: Contract, before: str | None) -> bool:
    """Whether a correct body runs on a newly chosen shape as it is: it reads only through the accessors and
    the values the framework loads, and passes the local checks on that shape's contract."""
    return moves_unchanged(before or "") and check(contract, before or "").ok


def twin_id(region: Region, route: str, before: str | None) -> tuple[str, list[str]]:
    """A region's identity among twins this round (its contract with neutral names, its route, its last body
    in neutral names), hashed so it keys a JSON object, and its input names."""
    key, names = twin_key(region)
    neutral = rename_body(before or "", names, [f"@{i}" for i in range(len(names))])
    return hashlib.sha256("\0".join((key, route, neutral)).encode()).hexdigest(), names


def twin_copy(contract: Contract, names: list[str], twin: Twin) -> str | None:
    """The twin's body renamed into this region's names, where it passes the local checks here."""
    copy = check(contract, rename_body(twin["body"], twin["names"], names))
    return copy.body if copy.ok else None


def assemble(
    task: dict[str, Any], written: Sequence[Written], launcher: Launcher = "nvrtc", fuse: bool = True
) -> dict[str, Any]:
    """The candidate's program and what the job line and later rounds need: the program (the reference's
    graph with each region's kernel spliced in; with `fuse`, each map whose only reader is a written
    reduction computed inside that reduction's kernel, regions.prologue, and each map over the rows of
    written reductions run in their kernel after them, regions.row_maps), one marker per kernel where the
    launcher is the evaluator's region kind (so each kernel is also judged alone, those fused into another
    too; None for a standalone `load_inline` program), each region's body and its ops, and what was fused
    into what."""
    problem = problem_from_dict(task)
    traced = trace_source(problem.source)
    fused = fused_prologues(traced, written) if fuse else Fused(list(written), [], {})
    rows = fused_row_maps(traced, fused.program) if fuse else RowMaps(fused.program, [], {})
    alone = [*fused.alone, *rows.alone] if launcher == "nvrtc" else []
    return {
        "code": export_program(problem, rows.program, launcher, alone),
        "regions": region_markers([*rows.program, *alone]) if launcher == "nvrtc" else None,
        "bodies": {w.region.id: w.body for w in written},
        "region_ops": {w.region.id: list(dict.fromkeys(s.target for s in w.region.steps)) for w in written},
        "prologues": fused.into,
        "row_maps": rows.into,
    }
