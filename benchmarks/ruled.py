"""The model's own bodies on their first contracts and on the framework's ruled launch shapes, one GPU run.

A run directory's paused jobs (run.py --evaluator deferred; `run.py --resume DIR --write-jobs` writes them)
hold the programs the graph assembled. Each program's kernels are cut back into the bodies the model wrote
(the first contract's head and tail around them), and the same bodies go out again on the shapes the
framework's rules pick (regions.shapes.ruled_launch: Context.launch = "ruled"), where a body moves there
unchanged. Judging both in one run says what the ruled launch gains on the model's kernels, with eager and
torch.compile timed in each candidate's trials.

    python -m benchmarks.ruled jobs --run runs/fast30 --ambition moderate --jobs .device/ruled.jsonl  # here
    KG_JUDGE_JOBS=.device/ruled.jsonl scripts/gpu_suite.sh judge                                    # GPU
    python -m benchmarks.ruled report --verdicts ruled.verdicts.jsonl --jobs .device/ruled.jsonl    # here
    python -m benchmarks.ruled report --verdicts benchmarks/results/ruled/model.verdicts.jsonl \
        --jobs benchmarks/results/ruled/model.job_ids.json     # the committed run (2026-12-05, H100)
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import sys
from pathlib import Path
from typing import Any

from graph.runner.jsonl import read_jsonl

RULED = "/ruled"  # the job id suffix of a program whose bodies run on their ruled shapes


def kernel_bodies(program: str) -> dict[str, str]:
    """Region id -> its kernel's CUDA source, from the program's `_KG_CUDA_<id>` constants (each opens
    with the line break after its quotes)."""
    out = {}
    for node in ast.parse(program).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            name = getattr(node.targets[0], "id", "")
            if name.startswith("_KG_CUDA_") and isinstance(node.value.value, str):
                out[name.removeprefix("_KG_CUDA_")] = node.value.value.removeprefix("\n")
    return out


def cut_body(source: str, head: str, tail: str) -> str | None:
    """The body between a contract's head and tail; None where the source is not that contract's."""
    start, end = f"{head}\n", f"\n{tail}"
    if not (source.startswith(start) and source.endswith(end)):
        return None
    return source[len(start) : len(source) - len(end)]


def ruled_jobs(run_jobs: Path, ambition: str) -> tuple[list[dict[str, Any]], list[str]]:
    """Each job of the run as it was, then its ruled twin where a body moved; and why others were left."""
    from benchmarks.regions import region_job
    from evaluator.problem import problem_from_dict
    from regions.export import Written
    from regions.offering import offered
    from regions.shapes import ruled_launch

    lines, left = [], []
    for job in read_jsonl(run_jobs):
        lines.append(job)
        problem = problem_from_dict(job["problem"])
        parts = {r.id: (r, c) for r, c in offered(problem.source, ambition)[0]}
        sources = kernel_bodies(job["code"])
        written, moved = [], 0
        for rid in [m["id"] for m in job.get("regions") or []]:
            region, first = parts.get(rid, (None, None))
            body = cut_body(sources.get(rid, ""), first.head, first.tail) if first else None
            if body is None:
                left.append(
                    f"{job['job_id']}: a kernel is no first contract offered now (a shape chosen, or "
                    "the cut changed)"
                )
                break
            ruled = ruled_launch(region, body)
            moved += ruled is not None
            written.append(Written(region, ruled[1] if ruled else first, body))
        else:
            if moved:
                lines.append(region_job(job["job_id"] + RULED, problem, written))
            else:
                left.append(f"{job['job_id']}: no body moves to a ruled shape")
    return lines, left


def task_of(job_id: str) -> str:
    """`L2/Conv2D_ReLU_BiasAdd` from `zero_shot:L2/Conv2D_ReLU_BiasAdd|Conv2D_ReLU_BiasAdd/r0s0[/ruled]`."""
    return job_id.split(":", 1)[-1].split("|", 1)[0]


def sent_ids(path: Path) -> list[str]:
    """The job ids of a jobs file, or of a JSON list of them (a results folder keeps the ids alone: the
    programs are megabytes)."""
    if path.suffix == ".json":
        return [str(i) for i in json.loads(path.read_text())]
    return [line["job_id"] for line in read_jsonl(path)]


def summarise(verdicts: list[dict[str, Any]], job_ids: list[str]) -> dict[str, Any]:
    """Per task judged both ways: the first and the ruled program's verdict and speedups (where nothing
    moved, the ruled program is the first); counts of each setup. A task whose ruled program was not
    judged yet is left out of both."""
    by_id = {v["job_id"]: v for v in verdicts}
    sent = set(job_ids)
    rows = []
    for job_id in job_ids:
        if job_id.endswith(RULED) or job_id not in by_id:
            continue
        moved = job_id + RULED in sent
        if moved and job_id + RULED not in by_id:
            continue
        ruled = by_id[job_id + RULED] if moved else by_id[job_id]
        task = task_of(job_id)
        rows.append({"task": task, "first": cell(by_id[job_id]), "ruled": cell(ruled), "moved": moved})
    summary: dict[str, Any] = {"rows": rows}
    for setup in ("first", "ruled"):
        cells = [r[setup] for r in rows]
        summary[setup] = counts(cells) | {
            "geomean_eager": geomean([c["eager"] for c in cells if c["strict"]])
        }
    return summary


FASTER = 1.05  # issue 27's "faster": at least 5% faster


def counts(cells: list[dict[str, Any]]) -> dict[str, int]:
    """Cells judged, strictly correct, and at least 1.05x faster than eager and than torch.compile."""
    right = [c for c in cells if c["strict"]]
    return {
        "tasks": len(cells),
        "strict": len(right),
        "faster_eager": sum(c["eager"] >= FASTER for c in right),
        "faster_compile": sum(c["compile"] >= FASTER for c in right),
    }


def cell(verdict: dict[str, Any]) -> dict[str, Any]:
    """A verdict's table cell: speedups count only where it is strictly correct."""
    strict = verdict.get("verdict") == "correct" and verdict.get("counted") == "strict"
    return {
        "verdict": verdict.get("verdict"),
        "strict": strict,
        "eager": float(verdict.get("speedup_eager") or 0.0) if strict else 0.0,
        "compile": float(verdict.get("speedup_compile") or 0.0) if strict else 0.0,
        "share": verdict.get("custom_kernel_share"),
        # the candidate's own median time, ms (its speedups divide the reference's, timed in its process)
        "ms": float(((verdict.get("evidence") or {}).get("timing") or {}).get("candidate", {}).get("ms") or 0)
        if strict
        else 0.0,
    }


def geomean(values: list[float]) -> float | None:
    values = [v for v in values if v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def markdown(summary: dict[str, Any], device: str) -> str:
    def x(v: float) -> str:
        return f"{v:.2f}x" if v else "-"

    lines = [
        f"Measured on {device}; the same bodies on their first contracts and on the ruled shapes, one run.",
        "",
        "| task | first: verdict | x eager | x compile | ruled: verdict | x eager | x compile |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in summary["rows"]:
        f, g = r["first"], r["ruled"]
        lines.append(
            f"| {r['task']} | {f['verdict']} | {x(f['eager'])} | {x(f['compile'])} | {g['verdict']} | "
            f"{x(g['eager'])} | {x(g['compile'])} |"
        )
    lines.append("")
    for setup in ("first", "ruled"):
        s = summary[setup]
        gm = f"{s['geomean_eager']:.2f}x" if s["geomean_eager"] else "-"
        lines.append(
            f"- {setup}: {s['strict']} of {s['tasks']} strictly correct; {s['faster_eager']} at least 1.05x "
            f"eager, {s['faster_compile']} at least 1.05x torch.compile; geomean of the correct {gm} eager"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="cmd", required=True)
    j = sub.add_parser("jobs")
    j.add_argument("--run", type=Path, required=True, help="a run directory with jobs.jsonl")
    j.add_argument("--ambition", default="moderate", help="the run's ambition (its regions)")
    j.add_argument("--jobs", type=Path, required=True)
    r = sub.add_parser("report")
    r.add_argument("--verdicts", type=Path, required=True)
    r.add_argument(
        "--jobs",
        type=Path,
        required=True,
        help="the jobs file the verdicts judged, or a JSON list of its ids",
    )
    r.add_argument("--out", type=Path, help="write summary.md and summary.json into this folder")
    args = parser.parse_args(argv)
    if args.cmd == "jobs":
        lines, left = ruled_jobs(args.run / "jobs.jsonl", args.ambition)
        args.jobs.parent.mkdir(parents=True, exist_ok=True)
        args.jobs.write_text("".join(json.dumps(line) + "\n" for line in lines))
        for why in left:
            print(f"left: {why}", file=sys.stderr)
        print(f"{len(lines)} jobs -> {args.jobs}", file=sys.stderr)
        return 0
    verdicts = list(read_jsonl(args.verdicts))
    devices = {str((v.get("evidence") or {}).get("gpu") or "") for v in verdicts} - {""}
    summary = summarise(verdicts, sent_ids(args.jobs))
    text = markdown(summary, ", ".join(sorted(devices)) or "the GPU of the verdicts")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "summary.md").write_text(text)
        (args.out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
