"""What a problem offers the model at an ambition: the cut the ambition works on, the regions a contract
fits, and the chosen ones with their contracts. The graph's nodes, `python -m regions show` and
the benchmarks all offer through here, so they offer the same regions."""

from __future__ import annotations

from regions.contract import Contract, render
from regions.model import Region, RegionError
from regions.partition import offer, partition
from regions.trace import Traced


def cut(traced: Traced, ambition: str) -> list[Region]:
    """The partition the ambition works on. Aggressive fuses each product's pointwise epilogue into it,
    except where no contract fits the fused region (a transposed convolution): that epilogue stays a map
    region of its own, which does have one."""
    if ambition != "aggressive":
        return partition(traced)
    regions = partition(traced, fuse_epilogues=True)
    fused = [r for r in regions if r.kind == "contraction" and len(r.steps) > 1]
    fits = {region.id for region, _ in contracted(fused)[0]}
    apart = frozenset(r.nodes[0] for r in fused if r.id not in fits)
    return partition(traced, fuse_epilogues=True, apart=apart) if apart else regions


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
