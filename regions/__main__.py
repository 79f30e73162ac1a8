"""`python -m regions show PROBLEM.py [--ambition A] [--contract]`: how a problem is cut, what is
offered, the launch shapes the fast second may move each offered region to, and (with --contract) what
the model reads for each offered region."""

from __future__ import annotations

import argparse
import sys

from evaluator.problem import ProblemError, load_problem
from regions.model import AMBITIONS, Region, RegionError, TensorInfo
from regions.offering import choose, contracted, cut
from regions.prologue import prologues
from regions.shapes import shapes_for
from regions.trace import trace_problem


def _tensor(t: TensorInfo) -> str:
    return f"{t.name} {tuple(t.shape)} {t.dtype}"


def describe(region: Region, offered: bool) -> list[str]:
    """A region as a few readable lines; '*' marks an offered one."""
    unit = "flops" if region.kind == "contraction" else "bytes"
    lines = [f"{'*' if offered else ' '} {region.id} {region.kind}  cost {region.cost:.3g} {unit}"]
    lines.append("    inputs:  " + (", ".join(_tensor(t) for t in region.inputs) or "-"))
    if region.scalars:
        lines.append("    scalars: " + ", ".join(f"{n} = {v!r} (float32)" for n, v in region.scalars))
    lines.append("    output:  " + _tensor(region.output))
    lines += [f"      {step.code}" for step in region.steps]
    return lines


def show(path: str, ambition: str, contracts: bool = False) -> int:
    try:
        problem = load_problem(path)
        traced = trace_problem(problem)
        regions = cut(traced, ambition)
    except (ProblemError, RegionError) as exc:
        print(f"cannot cut {path} into regions: {exc}", file=sys.stderr)
        return 2
    fit, unfit = contracted(regions)
    chosen = choose(fit, ambition)
    joins = prologues(traced, [region for region, _ in chosen])
    ids = {region.id for region, _ in chosen}
    print(f"{path}: {len(regions)} regions; offered at {ambition}: {', '.join(sorted(ids)) or 'none'}")
    for region in regions:
        print("\n".join(describe(region, region.id in ids)))
        if region.id in ids:
            menu = ", ".join(shape.name for shape, _ in shapes_for(region)) or "none"
            print(f"    launch shapes for the fast second: {menu}")
        if region.id in joins:
            print(f"    runs inside {joins[region.id]}'s kernel, at each element it reads (prologue fusion)")
    for why in unfit:
        print(f"left to PyTorch, no contract fits: {why}")
    for region, contract in chosen if contracts else []:
        print(f"\n# contract of {region.id}\n{contract.facts}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m regions", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    cmd = sub.add_parser("show", help="trace a problem, print its regions and mark the offered ones")
    cmd.add_argument("problem", help="a KernelBench-format problem file")
    cmd.add_argument("--ambition", choices=AMBITIONS, default="conservative")
    cmd.add_argument("--contract", action="store_true", help="also print each offered region's contract")
    args = parser.parse_args(argv)
    return show(args.problem, args.ambition, args.contract)


if __name__ == "__main__":
    sys.exit(main())
