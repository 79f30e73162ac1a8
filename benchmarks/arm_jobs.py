"""The jobs of an A/B run in one file: several deferred runs' jobs.jsonl, each job id ending in its arm
(`/old`, `/new`, ...) as benchmarks.arms reads the verdicts back, and the evaluator's config beside it
(scripts/gpu_suite.sh kinds judges every .device/kinds/NAME.jsonl with its NAME.config):

    python -m benchmarks.arm_jobs runs/cv_old:old runs/cv_new:new --out .device/kinds/conv.jsonl \\
        --config '{"reference_compile": "off", "workers_per_device": 6}'

One GPU run judges every arm, so their timings compare. `--once` sends a program the arms share once
(`benchmarks.arms --same NAME.same.json` gives each copy its verdict). `--kept VERDICTS.jsonl` sends only
the candidate select keeps of each task and arm by an earlier run's verdicts (the same arms), to time
it again beside later candidates.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from benchmarks.arms import kept
from graph.runner.jsonl import read_jsonl


def pack(
    runs: list[tuple[Path, str]],
    out: Path,
    config: str | None = None,
    once: bool = False,
    only: set[str] | None = None,
) -> int:
    """Write the runs' jobs, ids suffixed `/<arm>`, into `out` (and `config` beside it as out's .config);
    the number of jobs. `once`: a job identical to one packed before but for its id (the same program, the
    same task: two arms or two cuts that wrote the same bytes) is not packed again; out's .same.json maps
    its id to the one judged, and benchmarks.arms --same gives it that verdict. `only`: the packed ids to
    send (kept_ids), the others left out. ValueError for a run without jobs, a job without an id, an arm
    that is no plain suffix, a job id twice in one arm, or a run `only` keeps nothing of."""
    lines, seen, first, same = [], set(), {}, {}
    for run, arm in runs:
        if not arm or "/" in arm:
            raise ValueError(f"arm {arm!r} of {run}: an arm is a plain job-id suffix (no '/')")
        jobs = read_jsonl(run / "jobs.jsonl")
        if not jobs:
            raise ValueError(f"{run}: no jobs.jsonl with jobs (a run.py --evaluator deferred directory)")
        if only is not None and not any(f"{job.get('job_id')}/{arm}" in only for job in jobs):
            raise ValueError(f"{run}:{arm}: the verdicts keep none of its jobs (verdicts of other runs?)")
        for job in jobs:
            if "job_id" not in job:
                raise ValueError(f"{run}/jobs.jsonl: a line without a job_id (not a run.py jobs file?)")
            job_id = f"{job['job_id']}/{arm}"
            if job_id in seen:
                raise ValueError(f"{job_id}: twice (the same run in one arm twice?)")
            seen.add(job_id)
            if only is not None and job_id not in only:
                continue
            content = json.dumps({k: v for k, v in job.items() if k != "job_id"}, sort_keys=True)
            if once and content in first:
                same[job_id] = first[content]
                continue
            first.setdefault(content, job_id)
            lines.append(json.dumps({**job, "job_id": job_id}))
    if config is not None:
        json.loads(config)  # a typo fails here, not on the GPU host
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    if config is not None:
        out.with_suffix(".config").write_text(config, encoding="utf-8")
    if once:
        out.with_suffix(".same.json").write_text(json.dumps(same, indent=1) + "\n", encoding="utf-8")
    return len(lines)


def kept_ids(verdicts: list[dict[str, Any]], arms: list[str]) -> set[str]:
    """The job ids select keeps, one per task and arm, by these verdicts (benchmarks.arms.kept)."""
    return {str(verdict["job_id"]) for verdict, _ in kept(verdicts, arms).values()}


def _run_arm(text: str) -> tuple[Path, str]:
    run, sep, arm = text.rpartition(":")
    if not sep:
        raise argparse.ArgumentTypeError(f"{text!r}: expected RUN_DIR:ARM")
    return Path(run), arm


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("runs", nargs="+", type=_run_arm, metavar="RUN_DIR:ARM")
    parser.add_argument(
        "--out", type=Path, required=True, help="the jobs file, e.g. .device/kinds/NAME.jsonl"
    )
    parser.add_argument("--config", help="the evaluator's config overrides as JSON, written as NAME.config")
    parser.add_argument(
        "--once", action="store_true", help="judge each distinct job once (NAME.same.json names the copies)"
    )
    parser.add_argument(
        "--kept",
        type=Path,
        action="append",
        default=[],
        help="verdicts of an earlier run of these arms: send only the candidate select keeps per task",
    )
    args = parser.parse_args(argv)
    arms = [arm for _, arm in args.runs]
    only = kept_ids([v for p in args.kept for v in read_jsonl(p)], arms) if args.kept else None
    try:
        count = pack(args.runs, args.out, args.config, once=args.once, only=only)
    except ValueError as error:
        print(f"arm_jobs: {error}", file=sys.stderr)
        return 2
    print(f"{count} jobs in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
