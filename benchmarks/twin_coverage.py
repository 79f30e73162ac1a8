"""`python -m benchmarks.twin_coverage DIR [--skip L3/7 ...]`: which regions the CPU can check a body on.

The graph's local checks run a body on the CPU (regions.emulate) at its region's own size, on a twin in
the problem shrunk, or on the region narrowed on its own (regions.narrowed); a region with none of them
sends its body to the GPU unchecked. Per problem, each cut (moderate, aggressive): the regions with a
contract, and those without a CPU check (id, kind, ops, cost). CPU only; no model, no GPU.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
from pathlib import Path
from typing import Any

from evaluator.problem import Problem, scan_problems
from regions.contract import render
from regions.emulate import small_twin
from regions.model import RegionError
from regions.offering import cut
from regions.trace import trace_source

CUTS = ("moderate", "aggressive")


def problem_twins(problem: Problem) -> dict[str, Any]:
    """One problem's row: per cut, how many regions have a contract and which of them have no CPU check."""
    row: dict[str, Any] = {"problem": f"L{problem.level}/{problem.name}"}
    for ambition in CUTS:
        try:
            with contextlib.redirect_stderr(io.StringIO()):
                regions = cut(trace_source(problem.source), ambition)
        except RegionError as exc:
            row[ambition] = {"error": str(exc)}
            continue
        contracted, unchecked = 0, []
        for region in regions:
            try:
                render(region)
            except RegionError:
                continue
            contracted += 1
            if small_twin(problem.source, region, ambition) is None:
                ops = [s.target.rsplit(".", 1)[-1] for s in region.steps]
                unchecked.append({"id": region.id, "kind": region.kind, "ops": ops, "cost": region.cost})
        row[ambition] = {"regions": contracted, "unchecked": unchecked}
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.twin_coverage", description=__doc__)
    parser.add_argument("root", type=Path, help="a KernelBench-format directory or problem file")
    parser.add_argument("--skip", action="append", default=[], help="LEVEL/ID to leave out, e.g. L3/10")
    parser.add_argument("--out", type=Path, help="write the rows and totals here as JSON")
    args = parser.parse_args(argv)
    problems, errors = scan_problems(args.root)
    for error in errors:
        print(f"skipped: {error}", file=sys.stderr)
    skip = set(args.skip)
    rows = [problem_twins(p) for p in problems if f"L{p.level}/{p.problem_id}" not in skip]
    cuts = [r[a] for r in rows for a in CUTS if "regions" in r[a]]
    total = sum(c["regions"] for c in cuts)
    checked = total - sum(len(c["unchecked"]) for c in cuts)
    for row in rows:
        for ambition in CUTS:
            for region in row[ambition].get("unchecked", []):
                where = f"{row['problem']} {ambition} {region['id']}"
                print(f"{where} {region['kind']} {region['ops']}: no CPU check")
    print(f"{checked} of {total} regions ({len(rows)} problems, both cuts) have a CPU check")
    if args.out:
        args.out.write_text(json.dumps({"checked": checked, "regions": total, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
