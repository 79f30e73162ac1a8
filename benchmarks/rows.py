"""Rows of the shared-30 table on the default pipeline: one program per task and setup, judged in one run.

A setup's row is the program its run sends for each task as the pipeline now assembles it (the ruled launch
where a body moves, regions.shapes.RULED); the embedded model's row and the no-model row (`--set
writer=rules`) side by side say what the model adds on top of the framework. Per task: the strict verdict,
the speedup against eager and torch.compile (both timed in the candidate's own trials), and the share of the
candidate's GPU time its custom kernels carry; per row: the counts the issue names and geomeans by level.
Programs that are byte-identical across rows go to the GPU once (`jobs` keeps the first) and their one
verdict stands in each row; the report says how many.

    python -m benchmarks.rows jobs --row model=A.jsonl,B.jsonl --row rules=C.jsonl --jobs .device/rows.jsonl
    KG_JUDGE_JOBS=.device/rows.jsonl scripts/gpu_suite.sh judge                               # GPU
    python -m benchmarks.rows report --verdicts rows.verdicts.jsonl --ids .device/rows.ids.json --out DIR
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from benchmarks.ruled import RULED, cell, geomean
from graph.runner.jsonl import read_jsonl

FASTER = 1.05


def task_of(job_id: str) -> str:
    """`L2/Conv2D_ReLU_BiasAdd` from `zero_shot:L2/Conv2D_ReLU_BiasAdd|Conv2D_ReLU_BiasAdd/r0s0[/ruled]`."""
    return job_id.split(":", 1)[-1].split("|", 1)[0]


def default_programs(paths: list[Path]) -> dict[str, dict[str, Any]]:
    """Task -> the job the pipeline runs by default: a ruled twin (benchmarks.ruled) where one exists, else
    the job as its run wrote it; a later file's task replaces an earlier one's (a task generated again)."""
    chosen: dict[str, dict[str, Any]] = {}
    for path in paths:
        jobs = list(read_jsonl(path))
        ruled = {j["job_id"].removesuffix(RULED) for j in jobs if j["job_id"].endswith(RULED)}
        for job in jobs:
            if job["job_id"].endswith(RULED) or job["job_id"] not in ruled:
                chosen[task_of(job["job_id"])] = job
    return chosen


def jobs(rows: dict[str, list[Path]]) -> tuple[list[dict[str, Any]], dict[str, dict[str, str]]]:
    """The jobs to judge (one per distinct program) and, per row, task -> the job id whose verdict is its."""
    out: list[dict[str, Any]] = []
    by_code: dict[str, str] = {}
    ids: dict[str, dict[str, str]] = {}
    for row, paths in rows.items():
        ids[row] = {}
        for task, job in sorted(default_programs(paths).items()):
            digest = hashlib.sha256(job["code"].encode()).hexdigest()
            if digest not in by_code:
                by_code[digest] = job["job_id"]
                out.append(job)
            ids[row][task] = by_code[digest]
    return out, ids


def _cell(verdict: dict[str, Any] | None) -> dict[str, Any]:
    if verdict is None:
        return {"verdict": "not judged", "strict": False, "eager": 0.0, "compile": 0.0, "share": None}
    return cell(verdict)


def summarise(verdicts: list[dict[str, Any]], ids: dict[str, dict[str, str]]) -> dict[str, Any]:
    by_id = {v["job_id"]: v for v in verdicts}
    tasks = sorted({t for row in ids.values() for t in row}, key=_order)
    table = {row: {t: _cell(by_id.get(ids[row].get(t, ""))) for t in tasks} for row in ids}
    counts = {}
    for row, cells in table.items():
        right = {t: c for t, c in cells.items() if c["strict"]}
        counts[row] = {
            "tasks": len(ids[row]),
            "judged": sum(c["verdict"] != "not judged" for c in cells.values()),
            "strict": len(right),
            "faster_eager": sum(c["eager"] >= FASTER for c in right.values()),
            "faster_compile": sum(c["compile"] >= FASTER for c in right.values()),
            "geomean_eager": geomean([c["eager"] for c in right.values()]),
            "geomean_eager_by_level": {
                level: geomean([c["eager"] for t, c in right.items() if t.startswith(level)])
                for level in ("L1", "L2", "L3")
            },
            "share_by_level": {
                level: _median([c["share"] for t, c in right.items() if t.startswith(level) and c["share"]])
                for level in ("L1", "L2", "L3")
            },
        }
    shared = sum(len({ids[r][t] for r in ids if t in ids[r]}) < sum(t in ids[r] for r in ids) for t in tasks)
    return {"tasks": tasks, "table": table, "counts": counts, "identical_across_rows": shared}


def _order(task: str) -> tuple[int, str]:
    return (int(task[1]) if task[:1] == "L" and task[1:2].isdigit() else 9, task)


def _median(values: list[float]) -> float | None:
    values = sorted(values)
    if not values:
        return None
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def markdown(summary: dict[str, Any], device: str) -> str:
    rows = list(summary["table"])

    def x(v: float) -> str:
        return f"{v:.2f}x" if v else "-"

    def share(v: float | None) -> str:
        return f"{v:.2f}" if v is not None else "-"

    head = "| task | " + " | ".join(f"{r}: verdict | x eager | x compile | share" for r in rows) + " |"
    lines = [
        f"Measured on {device}; one program per task and row, judged in one run (the paper config).",
        "",
        head,
        "|---|" + "---|---|---|---|" * len(rows),
    ]
    for task in summary["tasks"]:
        cells = [summary["table"][r][task] for r in rows]
        lines.append(
            f"| {task} | "
            + " | ".join(
                f"{c['verdict']} | {x(c['eager'])} | {x(c['compile'])} | {share(c['share'])}" for c in cells
            )
            + " |"
        )
    lines.append("")
    for row in rows:
        c = summary["counts"][row]
        gm = ", ".join(f"{k} {v:.2f}x" for k, v in c["geomean_eager_by_level"].items() if v)
        sh = ", ".join(f"{k} {v:.2f}" for k, v in c["share_by_level"].items() if v is not None)
        lines.append(
            f"- {row}: {c['strict']} of {c['judged']} judged strictly correct ({c['tasks']} tasks); "
            f"{c['faster_eager']} at least {FASTER}x eager, {c['faster_compile']} at least {FASTER}x "
            f"torch.compile; geomean of the correct by level: {gm}; median share of the candidate's GPU "
            f"time in its custom kernels: {sh}"
        )
    lines.append(
        "- tasks whose programs are byte-identical across rows (one verdict stands in each): "
        f"{summary['identical_across_rows']}"
    )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="cmd", required=True)
    j = sub.add_parser("jobs", help="the jobs of each row's default programs, one per distinct program")
    j.add_argument("--row", action="append", required=True, help="NAME=JOBS.jsonl[,MORE.jsonl] (later wins)")
    j.add_argument("--jobs", type=Path, required=True)
    r = sub.add_parser("report", help="the table from the verdicts")
    r.add_argument("--verdicts", type=Path, required=True, nargs="+")
    r.add_argument("--ids", type=Path, required=True, help="the ids file `jobs` wrote beside the jobs")
    r.add_argument("--out", type=Path, help="write summary.md and summary.json into this folder")
    args = parser.parse_args(argv)
    if args.cmd == "jobs":
        rows = {}
        for spec in args.row:
            name, _, files = spec.partition("=")
            rows[name] = [Path(f) for f in files.split(",") if f]
        lines, ids = jobs(rows)
        args.jobs.parent.mkdir(parents=True, exist_ok=True)
        args.jobs.write_text("".join(json.dumps(line) + "\n" for line in lines))
        args.jobs.with_suffix(".ids.json").write_text(json.dumps(ids, indent=1) + "\n")
        print(f"{len(lines)} jobs -> {args.jobs}; ids -> {args.jobs.with_suffix('.ids.json')}")
        return 0
    verdicts = [v for path in args.verdicts for v in read_jsonl(path)]
    summary = summarise(verdicts, json.loads(args.ids.read_text()))
    device = next((str(v["evidence"]["gpu"]) for v in verdicts if (v.get("evidence") or {}).get("gpu")), "?")
    text = markdown(summary, device)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "summary.md").write_text(text)
        (args.out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
