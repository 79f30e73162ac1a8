"""The tiled launch shape against the first contract, on the model's own product kernels.

Each greedy body of the region benchmark (benchmarks/results/regions/samples.jsonl: the embedded 1.5B,
one conservative region per shared problem) whose region is a product the tiled shape fits
(evaluator.regions.shapes) goes out twice: on its first contract (one thread per output element, each
reading a row and a column from global memory) and on shared-memory tiles, unchanged. Both are judged in
one GPU run, so the ratio of their times is what the fast second's first move gains, without a model call.

    python -m benchmarks.launch_shapes jobs --jobs .device/shapes/jobs.jsonl          # here
    python -m evaluator run JOBS --out VERDICTS --config '{"reference_compile": "baseline", ...}'  # GPU
    python -m benchmarks.launch_shapes report --verdicts VERDICTS                       # here
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from benchmarks.regions import KERNELBENCH, RESULTS, RUNS, offered_contract
from graph.runner.jsonl import read_jsonl

SHAPES = ("first", "tiled")


def write_jobs(kernelbench: Path, samples: Path, jobs_path: Path) -> int:
    """Two job lines per greedy product body the tiled shape fits: `<problem>/first` and `<problem>/tiled`."""
    from evaluator.jobs import job_line
    from evaluator.problem import load_problems
    from evaluator.regions.check import check
    from evaluator.regions.export import Written, export_program, region_markers
    from evaluator.regions.model import RegionError
    from evaluator.regions.shapes import moves_to_tiles, tiled

    problems = {p.key: p for p in load_problems(kernelbench)}
    lines, skipped = [], []
    for row in read_jsonl(samples):
        if row.get("sample") != 0 or row.get("kind") != "contraction" or row["problem"] not in problems:
            continue
        problem = problems[row["problem"]]
        region, first = offered_contract(problem)
        try:
            shaped = tiled(region)
        except RegionError as exc:
            skipped.append(f"{row['problem']}: {exc}")
            continue
        if not moves_to_tiles(row["body"]) or not check(shaped, row["body"]).ok:
            skipped.append(f"{row['problem']}: the body touches memory itself or does not compile on tiles")
            continue
        for shape, contract in zip(SHAPES, (first, shaped), strict=True):
            written = [Written(region, contract, row["body"])]
            program = export_program(problem, written, "nvrtc")
            lines.append(
                job_line(
                    f"{row['problem']}/{shape}",
                    problem,
                    f"```python\n{program}```",
                    code=program,
                    extracted=True,
                    regions=region_markers(written),
                )
            )
    jobs_path.parent.mkdir(parents=True, exist_ok=True)
    jobs_path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    for why in skipped:
        print(f"left out: {why}", file=sys.stderr)
    print(f"{len(lines)} jobs -> {jobs_path}", file=sys.stderr)
    return 0


def summarise(verdicts: list[dict[str, Any]]) -> dict[str, Any]:
    """Per problem: each shape's strict verdict and speedups; the tiled/first time ratio where both are
    strictly correct, and its geomean."""
    by: dict[str, dict[str, dict[str, Any]]] = {}
    for v in verdicts:
        problem, _, shape = str(v["job_id"]).rpartition("/")
        by.setdefault(problem, {})[shape] = v
    rows, gains = [], []
    for problem, shapes in sorted(by.items()):
        row: dict[str, Any] = {"problem": problem}
        for shape in SHAPES:
            v = shapes.get(shape) or {}
            row[shape] = {
                "verdict": v.get("verdict"),
                "why": _why(v),
                "strict": bool(v.get("correct_strict")),
                "speedup_eager": v.get("speedup_eager"),
                "speedup_compile": v.get("speedup_compile"),
            }
        a, b = row["first"], row["tiled"]
        if a["strict"] and b["strict"] and a["speedup_eager"] and b["speedup_eager"]:
            row["tiled_over_first"] = round(b["speedup_eager"] / a["speedup_eager"], 2)
            gains.append(row["tiled_over_first"])
        rows.append(row)
    geomean = round(math.exp(sum(map(math.log, gains)) / len(gains)), 2) if gains else None
    return {"problems": rows, "compared": len(gains), "geomean_tiled_over_first": geomean}


def _why(verdict: dict[str, Any]) -> str:
    """Where a verdict that is not strictly correct failed: the strict checks it missed and how many
    elements were off (the signed-input trial is where a changed summation order shows)."""
    if verdict.get("correct_strict") or not verdict:
        return ""
    evidence = verdict.get("evidence") or {}
    signed = (evidence.get("strict") or {}).get("signed_trial") or {}
    failures = ", ".join(evidence.get("strict_failures") or []) or str(verdict.get("verdict"))
    if signed.get("mismatches"):
        return f"{failures}: {signed['mismatches']} elements, max abs err {signed.get('max_abs_err', 0):.1e}"
    return failures


def markdown(summary: dict[str, Any], device: str) -> str:
    def x(value: float | None) -> str:
        return f"{value:.2f}x" if value else "-"

    lines = [
        "# The tiled launch shape on the model's greedy product kernels",
        "",
        f"Measured on {device}; the same body on each shape, judged strictly in one run "
        "(benchmarks/launch_shapes.py).",
        "",
        "| problem | first contract | tiled | vs eager (first / tiled) | vs compile (first / tiled) "
        "| tiled / first |",
        "|---|---|---|---|---|---|",
    ]
    for r in summary["problems"]:
        a, b = r["first"], r["tiled"]
        lines.append(
            f"| {r['problem']} | {a['verdict']} | {b['verdict']}{f' ({why})' if (why := b['why']) else ''} | "
            f"{x(a['speedup_eager'])} / "
            f"{x(b['speedup_eager'])} | {x(a['speedup_compile'])} / {x(b['speedup_compile'])} | "
            f"{x(r.get('tiled_over_first'))} |"
        )
    lines += [
        "",
        f"Geomean tiled / first over {summary['compared']} problems: "
        f"{x(summary['geomean_tiled_over_first'])}.",
        "",
    ]
    return "\n".join(lines)


def report(verdicts_path: Path, results: Path) -> int:
    verdicts = read_jsonl(verdicts_path)
    if not verdicts:
        print(f"no verdicts in {verdicts_path}", file=sys.stderr)
        return 1
    summary = summarise(verdicts)
    device = next((v["evidence"].get("gpu") for v in verdicts if (v.get("evidence") or {}).get("gpu")), "?")
    summary["device"] = device
    (results / "launch_shapes.json").write_text(json.dumps(summary, indent=1) + "\n")
    (results / "launch_shapes.md").write_text(markdown(summary, device))
    print(markdown(summary, device))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="cmd", required=True)
    j = sub.add_parser("jobs")
    j.add_argument("--kernelbench", type=Path, default=KERNELBENCH)
    j.add_argument("--samples", type=Path, default=RUNS / "samples.jsonl")
    j.add_argument("--jobs", type=Path, required=True)
    r = sub.add_parser("report")
    r.add_argument("--verdicts", type=Path, required=True)
    r.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    if args.cmd == "jobs":
        return write_jobs(args.kernelbench, args.samples, args.jobs)
    return report(args.verdicts, args.results)


if __name__ == "__main__":
    sys.exit(main())
