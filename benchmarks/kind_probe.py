"""`python -m benchmarks.kind_probe SET [SET ...] --kind window`: can the embedded model write one loop kind?

For every problem of the sets, every region of the kind that the ambition offers (one per distinct
contract: twins, such as the same pooling repeated in a network, are written once), the embedded model
writes the body greedily as the graph's region writer does (local lint + NVRTC + the CPU emulation on the
problem shrunk, up to two sampled repairs), and the final kernel is emulated again for the record. No GPU:
this says whether the math is right on small shapes, not the strict verdict. Resumable: one JSON line per
region, into benchmarks/results/regions/kind_probe_<kind>.jsonl, and a summary beside it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from evaluator.problem import scan_problems
from graph.runner.jsonl import JsonlLog, read_jsonl
from regions.emulate import small_twin
from regions.model import RegionError
from regions.offering import offered

OUT = Path(__file__).resolve().parent / "results" / "regions"


def probe(sets: list[Path], kind: str, ambition: str, out: Path) -> dict[str, int]:
    from nodes.region_writer import write_region
    from regions.emulate import emulate

    path = out / f"kind_probe_{kind}.jsonl"
    done = {(r["problem"], r["region"]) for r in read_jsonl(path)}
    log = JsonlLog(path)
    try:
        for root in sets:
            problems, _ = scan_problems(root)
            for problem in problems:
                try:
                    chosen, _ = offered(problem.source, ambition)
                except RegionError:
                    continue
                seen: set[str] = set()
                for region, contract in chosen:
                    if region.kind != kind or contract.head in seen or (problem.key, region.id) in done:
                        continue
                    seen.add(contract.head)
                    small = small_twin(problem.source, region, ambition)
                    attempt = write_region(contract, temperature=0.0, seed=0, ambition=ambition, twin=small)
                    emulated = emulate(*small, attempt.body) if attempt.ok and small else None
                    row = {
                        "set": root.name,
                        "problem": problem.key,
                        "region": region.id,
                        "op": region.steps[0].target,
                        "checked": attempt.ok,
                        "rounds": attempt.rounds,
                        "emulated": bool(emulated and emulated.ok),
                        "emulation": emulated.error if emulated else "not emulated",
                        "body": attempt.body,
                    }
                    log.write(row)
                    said = f"checked {attempt.ok}, emulated {row['emulated']}"
                    print(f"{problem.key} {region.id} {row['op']}: {said}", flush=True)
    finally:
        log.close()
    rows = read_jsonl(path)
    summary = {
        "regions": len(rows),
        "checked": sum(r["checked"] for r in rows),
        "emulated_right": sum(r["emulated"] for r in rows),
    }
    (out / f"kind_probe_{kind}.json").write_text(json.dumps(summary, indent=1) + "\n")
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.kind_probe", description=__doc__)
    parser.add_argument("sets", nargs="+", type=Path)
    parser.add_argument("--kind", default="window")
    parser.add_argument("--ambition", default="moderate")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    print(json.dumps(probe(args.sets, args.kind, args.ambition, args.out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
