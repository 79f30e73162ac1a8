"""An arm's verdicts handed back to its run: each job id without its `/<arm>` suffix, as `run.py --resume
RUN --results FILE` takes them (benchmarks.arm_jobs packed the jobs with the suffix). A job `--once` did
not send gets the verdict of the one judged in its place (`--same NAME.same.json`), so its graph goes on
too:

    python -m benchmarks.arm_verdicts VERDICTS.jsonl [MORE.jsonl ...] --arm model [--same NAME.same.json] \\
        --out runs/am2/verdicts.jsonl
    python run.py --resume runs/am2 --results runs/am2/verdicts.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from benchmarks.arms import copies
from graph.runner.jsonl import read_jsonl


def for_arm(
    verdicts: list[dict[str, Any]], arm: str, same: list[dict[str, str]] | None = None
) -> list[dict[str, Any]]:
    """The arm's verdicts (copies included) with the suffix dropped, the last of each job winning."""
    suffix = f"/{arm}"
    last: dict[str, dict[str, Any]] = {}
    for verdict in verdicts + copies(verdicts, same or []):
        job_id = str(verdict.get("job_id", ""))
        if job_id.endswith(suffix):
            last[job_id.removesuffix(suffix)] = {**verdict, "job_id": job_id.removesuffix(suffix)}
    return list(last.values())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("verdicts", nargs="+", type=Path)
    parser.add_argument("--arm", required=True, help="the job-id suffix the run's jobs were packed with")
    parser.add_argument("--same", type=Path, action="append", default=[], help="an arm_jobs --once map")
    parser.add_argument("--out", type=Path, required=True, help="the verdicts file for run.py --results")
    args = parser.parse_args(argv)
    judged = [v for path in args.verdicts for v in read_jsonl(path)]
    mine = for_arm(judged, args.arm, [json.loads(p.read_text()) for p in args.same])
    if not mine:
        print(f"arm_verdicts: no verdict of a job ending in /{args.arm}", file=sys.stderr)
        return 2
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(json.dumps(v) + "\n" for v in mine), encoding="utf-8")
    print(f"{len(mine)} verdicts in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
