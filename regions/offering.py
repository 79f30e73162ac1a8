"""What a problem offers the model at an ambition: the cut the ambition works on, the regions a contract
fits, and the chosen ones with their contracts. The graph's nodes, `python -m regions show` and
the benchmarks all offer through here, so they offer the same regions."""

from __future__ import annotations

import functools
from typing import Any

from regions.contract import Contract, render
from regions.model import Kind, Region, RegionError
from regions.partition import FUSES_EPILOGUE, offer, partition
from regions.shares import profile_shares
from regions.trace import Traced, trace_source


def cut(traced: Traced, ambition: str) -> list[Region]:
    """The partition the ambition works on; fusion reaches further with it (FUSION). Moderate fuses the
    pointwise epilogue of each pooling window and reduction into its kernel (measured with the rules'
    bodies on the H100: faster than apart on all four problems, 1.02-1.26x, all strictly correct,
    benchmarks/results/fusion/); aggressive that of each product too, so the model's kernel computes the
    product. Where no contract fits a fused region (an addmm, a softmax that writes its row) its epilogue
    stays a map region of its own, which does have one."""
    fuse = FUSION.get(ambition, frozenset())
    if not fuse:
        return partition(traced)
    regions = partition(traced, fuse)
    fused = [r for r in regions if r.kind != "map" and len(r.steps) > 1]
    fits = {region.id for region, _ in contracted(fused)[0]}
    apart = frozenset(r.nodes[0] for r in fused if r.id not in fits)
    return partition(traced, fuse, apart) if apart else regions


# The core kinds whose pointwise epilogue each ambition fuses into the core's kernel
FUSION: dict[str, frozenset[Kind]] = {
    "moderate": frozenset({"window", "reduce"}),
    "aggressive": FUSES_EPILOGUE,
}


def contracted(regions: list[Region]) -> tuple[list[tuple[Region, Contract]], list[str]]:
    """Every computing region a contract fits, with it, and why for each one none fits (a mean over two
    dims, an int64 tensor): those are left to PyTorch like kept ones."""
    fit: list[tuple[Region, Contract]] = []
    unfit: list[str] = []
    for region in regions:
        if region.kind == "kept":
            continue
        try:
            fit.append((region, render(region)))
        except RegionError as exc:
            unfit.append(str(exc))
    return fit, unfit


def choose(
    fit: list[tuple[Region, Contract]], ambition: str, weights: dict[str, float] | None = None
) -> list[tuple[Region, Contract]]:
    """The offered ones among the regions a contract fits (partition.offer's rule), in graph order."""
    chosen = {r.id for r in offer([region for region, _ in fit], ambition, weights)}
    return [(region, contract) for region, contract in fit if region.id in chosen]


@functools.lru_cache(maxsize=16)
def _contracted(source: str, ambition: str) -> tuple[list[Region], list[tuple[Region, Contract]], list[str]]:
    """The cut, the regions a contract fits with theirs, why the others have none (cached: read only)."""
    regions = cut(trace_source(source), ambition)
    fit, unfit = contracted(regions)
    return regions, fit, unfit


def offered(
    source: str, ambition: str, profile: dict[str, Any] | None = None
) -> tuple[list[tuple[Region, Contract]], dict[str, float]]:
    """The regions the ambition offers in this problem's source with their contracts, and each region's
    share of the reference's measured time where `profile` has rows (the costliest region is then the
    measured one); RegionError says why none. A region no contract fits yet is left to PyTorch like a kept
    one: the others are still offered."""
    regions, fit, unfit = _contracted(source, ambition)
    rows = (profile or {}).get("rows") or []
    shares = profile_shares(regions, rows, trace_source(source).origins)  # kept ops claim their rows too
    chosen = choose(fit, ambition, shares)
    if not chosen:
        why = f": {'; '.join(unfit)}" if unfit else ""
        raise RegionError(f"no region is offered at ambition {ambition}{why}")
    return chosen, shares
