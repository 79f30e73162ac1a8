"""What fusing pointwise epilogues into windows and reductions gains, the model's part held fixed.

For each problem where the moderate cut fuses an epilogue into a pooling window or a reduction, two
programs go to the GPU, every body written by rule (regions.rules: no model, so the difference is the
framework's): `apart`, the conservative cut (each map, window and reduction its own kernel), and `fused`,
the moderate cut (the maps after a window or reduction computed in its kernel; until 2026-12-05 the
aggressive cut's, when moderate did not fuse, so results/fusion/ names them so). In both, products and
convolutions stay PyTorch's, so the ratio of the two times is what fusion gains around them. Judged in one
run with eager and torch.compile timed in the candidates' own trials.

    python -m benchmarks.fusion jobs --jobs .device/fusion/jobs.jsonl            # here (CPU)
    KG_FUSION_JOBS=.device/fusion/jobs.jsonl scripts/gpu_suite.sh fusion      # GPU (carry .device)
    python -m benchmarks.fusion report --verdicts fusion_verdicts.jsonl --jobs .device/fusion/jobs.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from benchmarks.regions import judged_on, region_job
from graph.runner.jsonl import read_jsonl

REPO = Path(__file__).resolve().parents[1]
SETS = (REPO.parent / "shared" / "kernelbench", REPO / "graph" / "demo_tasks" / "families")
RESULTS = REPO / "benchmarks" / "results" / "fusion"  # the report: summary.json, summary.md
VARIANTS = {"apart": "conservative", "fused": "moderate"}


def _written(problem: Any, ambition: str) -> list[Any]:
    """Every map, window and reduction region of the ambition's cut, its body written by rule; RegionError
    where a region has no rule (the comparison needs both programs whole)."""
    from regions.export import Written
    from regions.model import RegionError
    from regions.offering import contracted, cut
    from regions.rules import rule_body
    from regions.trace import trace_problem

    fit, _ = contracted(cut(trace_problem(problem), ambition))
    written = []
    for region, contract in fit:
        if region.kind == "contraction":
            continue  # PyTorch's in both programs
        body = rule_body(region, contract)
        if body is None:
            raise RegionError(f"{region.id}: no rule writes its body")
        written.append(Written(region, contract, body))
    return written


def fuses(written: list[Any]) -> bool:
    """Whether a window or reduction of the cut computes the steps after it."""
    return any(w.region.kind in ("window", "reduce") and len(w.region.steps) > 1 for w in written)


def write_jobs(sets: list[Path], jobs_path: Path) -> int:
    """`fusion:<problem>/apart` and `/fused` for every problem whose moderate cut fuses an epilogue into
    a window or a reduction and so launches fewer kernels (where the conservative cut already folded the
    steps into a following map, as a batch norm's rsqrt, only where they run moves: not measured)."""
    from evaluator.problem import load_problems
    from regions.model import RegionError

    lines: list[dict[str, Any]] = []
    for folder in sets:
        for problem in load_problems(folder):
            try:
                fused = _written(problem, VARIANTS["fused"])
                if not fuses(fused):
                    continue
                apart = _written(problem, VARIANTS["apart"])
                if len(fused) == len(apart):
                    continue
            except RegionError as exc:
                print(f"{problem.key}: skipped, {exc}", file=sys.stderr)
                continue
            for variant, written in (("apart", apart), ("fused", fused)):
                lines.append(region_job(f"fusion:{problem.key}/{variant}", problem, written))
    jobs_path.parent.mkdir(parents=True, exist_ok=True)
    jobs_path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    print(f"{len(lines)} jobs ({len(lines) // 2} problems) -> {jobs_path}", file=sys.stderr)
    return 0


def summarise(verdicts: list[dict[str, Any]], jobs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per problem: each variant's kernels, strict verdict and speedups; fused over apart where both are
    strictly correct; the geomean of that ratio."""
    kernels = {j["job_id"]: len(j.get("regions") or []) for j in jobs}  # one kernel per written region
    rows: dict[str, dict[str, Any]] = {}
    for v in verdicts:
        key, variant = str(v["job_id"]).removeprefix("fusion:").rsplit("/", 1)
        rows.setdefault(key, {"problem": key})[variant] = {
            "kernels": kernels.get(v["job_id"]),
            "correct_strict": bool(v.get("correct_strict")),
            "speedup_eager": v.get("speedup_eager"),
            "speedup_compile": v.get("speedup_compile"),
        }
    ratios = []
    for row in rows.values():
        apart, fused = row.get("apart") or {}, row.get("fused") or {}
        both = apart.get("correct_strict") and fused.get("correct_strict")
        if both and apart.get("speedup_eager") and fused.get("speedup_eager"):
            row["fused_over_apart"] = round(fused["speedup_eager"] / apart["speedup_eager"], 3)
            ratios.append(row["fused_over_apart"])
    geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios)) if ratios else None
    return {
        "problems": sorted(rows.values(), key=lambda r: r["problem"]),
        "geomean_fused_over_apart": geomean,
    }


def markdown(summary: dict[str, Any], device: str) -> str:
    def x(value: float | None) -> str:
        return "-" if value is None else f"{value:.2f}x"

    lines = [
        "# Epilogues fused into windows and reductions (bodies by rule, products left to PyTorch)",
        "",
        f"Device: {device}. `apart`: each region its own kernel; `fused`: "
        "the maps after a window or reduction in its kernel. Speedups are over eager (and torch.compile), "
        "timed in the candidate's own trials.",
        "",
        "| problem | kernels apart / fused | strict apart / fused | vs eager apart / fused "
        "| vs compile apart / fused | fused over apart |",
        "|---|---|---|---|---|---|",
    ]
    for row in summary["problems"]:
        a, f = row.get("apart") or {}, row.get("fused") or {}
        lines.append(
            f"| {row['problem']} | {a.get('kernels', '-')} / {f.get('kernels', '-')} | "
            f"{'yes' if a.get('correct_strict') else 'no'} / {'yes' if f.get('correct_strict') else 'no'} | "
            f"{x(a.get('speedup_eager'))} / {x(f.get('speedup_eager'))} | "
            f"{x(a.get('speedup_compile'))} / {x(f.get('speedup_compile'))} | "
            f"{x(row.get('fused_over_apart'))} |"
        )
    lines += [
        "",
        f"Geomean of fused over apart (both strictly correct): {x(summary['geomean_fused_over_apart'])}",
    ]
    return "\n".join(lines) + "\n"


def report(verdicts_path: Path, jobs_path: Path, out: Path) -> int:
    """summary.json and summary.md in `out`, the device named as the verdicts' evidence names it."""
    verdicts = list(read_jsonl(verdicts_path))
    summary = summarise(verdicts, list(read_jsonl(jobs_path)))
    device = judged_on(verdicts)
    summary["device"] = device
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    (out / "summary.md").write_text(markdown(summary, device))
    print(markdown(summary, device))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("jobs", help="the apart and fused programs of every problem that fuses")
    p.add_argument("--jobs", type=Path, required=True)
    p.add_argument("--sets", type=Path, nargs="*", default=list(SETS), help="KernelBench-format directories")
    p = sub.add_parser("report", help="the table from the GPU's verdicts")
    p.add_argument("--verdicts", type=Path, required=True)
    p.add_argument("--jobs", type=Path, required=True, help="the jobs file the verdicts answer")
    p.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    if args.cmd == "jobs":
        return write_jobs(args.sets, args.jobs)
    return report(args.verdicts, args.jobs, args.out)


if __name__ == "__main__":
    sys.exit(main())
