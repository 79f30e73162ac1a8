"""`python -m evaluator.regions show PROBLEM.py [--ambition A]`: how a problem is cut, and what is offered."""

from __future__ import annotations

import argparse
import sys

from evaluator.problem import ProblemError, load_problem
from evaluator.regions.model import AMBITIONS, Region, RegionError, TensorInfo
from evaluator.regions.partition import offer, partition
from evaluator.regions.trace import trace_problem


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


def show(path: str, ambition: str) -> int:
    try:
        problem = load_problem(path)
        regions = partition(trace_problem(problem))
    except (ProblemError, RegionError) as exc:
        print(f"cannot cut {path} into regions: {exc}", file=sys.stderr)
        return 2
    chosen = {r.id for r in offer(regions, ambition)}
    print(f"{path}: {len(regions)} regions; offered at {ambition}: {', '.join(sorted(chosen)) or 'none'}")
    for region in regions:
        print("\n".join(describe(region, region.id in chosen)))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evaluator.regions", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    cmd = sub.add_parser("show", help="trace a problem, print its regions and mark the offered ones")
    cmd.add_argument("problem", help="a KernelBench-format problem file")
    cmd.add_argument("--ambition", choices=AMBITIONS, default="conservative")
    args = parser.parse_args(argv)
    return show(args.problem, args.ambition)


if __name__ == "__main__":
    sys.exit(main())
