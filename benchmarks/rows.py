"""Rows of the shared-30 table on the default pipeline: one program per task and setup, judged in one run.

A setup's row is the program its run sends for each task as the pipeline now assembles it (the ruled launch
where a body moves, regions.shapes.RULED); the embedded model's row and the no-model row (`--set
writer=rules`) side by side say what the model adds on top of the framework. Per task: the strict verdict,
the speedup against eager and torch.compile (both timed in the candidate's own trials), and the share of the
candidate's GPU time its custom kernels carry; per row: the counts the issue names and geomeans by level.
Programs that are byte-identical across rows go to the GPU once (`jobs` keeps the first) and their one
verdict stands in each row; the report says how many.

A verdict belongs to a program, not to a job id: the report finds each row's program among judged jobs by
its source (sha256 of the code), so a program judged in an earlier run (the same bytes) keeps its verdict,
and each cell says which run judged it. A program no run judged is "not judged", never guessed.

    python -m benchmarks.rows jobs --row model=A.jsonl,B.jsonl --row rules=C.jsonl --jobs .device/rows.jsonl
    KG_JUDGE_JOBS=.device/rows.jsonl scripts/gpu_suite.sh judge                               # GPU
    python -m benchmarks.rows report --rows .device/rows.jsonl \
        --judged .device/rows.jsonl=rows.verdicts.jsonl [--judged EARLIER.jsonl=EARLIER.verdicts.jsonl] \
        --out DIR
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from benchmarks.ruled import RULED, cell, geomean, task_of
from graph.runner.jsonl import read_jsonl

FASTER = 1.05


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


def digest(job: dict[str, Any]) -> str:
    return hashlib.sha256(job["code"].encode()).hexdigest()


def jobs(rows: dict[str, list[Path]]) -> tuple[list[dict[str, Any]], dict[str, dict[str, str]]]:
    """The jobs to judge (one per distinct program) and, per row, task -> the job id whose verdict is its."""
    out: list[dict[str, Any]] = []
    by_code: dict[str, str] = {}
    ids: dict[str, dict[str, str]] = {}
    for row, paths in rows.items():
        ids[row] = {}
        for task, job in sorted(default_programs(paths).items()):
            key = digest(job)
            if key not in by_code:
                by_code[key] = job["job_id"]
                out.append(job)
            ids[row][task] = by_code[key]
    return out, ids


def programs_of(path: Path) -> dict[str, str]:
    """Job id -> program sha256: from a jobs file (.jsonl), or from a map of them (.json, what `report`
    writes), so a judged run stays usable once its job files are gone."""
    if path.suffix == ".json":
        return json.loads(path.read_text())
    return {j["job_id"]: digest(j) for j in read_jsonl(path)}


Judged = list[tuple[dict[str, str], Path]]  # (a run's job id -> program sha256, its verdicts file)


def judged(pairs: Judged) -> dict[str, tuple[dict[str, Any], str]]:
    """Program sha256 -> its verdict and the verdicts file that holds it, from (jobs, verdicts) pairs of
    runs; a later pair's verdict of the same program replaces an earlier one's."""
    found: dict[str, tuple[dict[str, Any], str]] = {}
    for codes, verdicts_path in pairs:
        for verdict in read_jsonl(verdicts_path):
            if verdict.get("job_id") in codes:
                found[codes[verdict["job_id"]]] = (verdict, verdicts_path.name)
    return found


def judged_programs(pairs: Judged) -> dict[str, dict[str, str]]:
    """Per verdicts file, job id -> program sha256 of the jobs it judged: with the verdicts committed, the
    table regenerates from the repository alone (`report --judged-from`)."""
    out: dict[str, dict[str, str]] = {}
    for codes, verdicts_path in pairs:
        ids = {v.get("job_id") for v in read_jsonl(verdicts_path)}
        out.setdefault(str(verdicts_path), {}).update({k: v for k, v in codes.items() if k in ids})
    return out


def _cell(found: tuple[dict[str, Any], str] | None) -> dict[str, Any]:
    if found is None:
        return {
            "verdict": "not judged",
            "strict": False,
            "eager": 0.0,
            "compile": 0.0,
            "share": None,
            "run": "-",
        }
    verdict, run = found
    return cell(verdict) | {"run": run, "gpu": str((verdict.get("evidence") or {}).get("gpu") or "?")}


def summarise(
    programs: dict[str, str], found: dict[str, tuple[dict[str, Any], str]], ids: dict[str, dict[str, str]]
) -> dict[str, Any]:
    """The table: per row and task, the verdict of that row's program (`programs`: job id -> sha256)."""
    tasks = sorted({t for row in ids.values() for t in row}, key=_order)
    table = {row: {t: _cell(found.get(programs.get(ids[row].get(t, ""), ""))) for t in tasks} for row in ids}
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
            "ceiling_by_level": {
                level: geomean([ceiling(c) for t, c in right.items() if t.startswith(level) and ceiling(c)])
                for level in ("L2", "L3")
            },
            "share_by_level": {
                level: _median(
                    [c["share"] for t, c in right.items() if t.startswith(level) and c["share"] is not None]
                )
                for level in ("L1", "L2", "L3")
            },
        }
    shared = sum(len({ids[r][t] for r in ids if t in ids[r]}) < sum(t in ids[r] for r in ids) for t in tasks)
    return {"tasks": tasks, "table": table, "counts": counts, "identical_across_rows": shared}


def ceiling(c: dict[str, Any]) -> float:
    """The speedup against eager a cell would have if its custom kernels took no GPU time: what the work
    left to PyTorch (cuDNN's convolutions, cuBLAS's products) bounds it to; 0.0 where the custom kernels
    carry (nearly) all of it or the share was not measured."""
    share = c["share"]
    return c["eager"] / (1.0 - share) if share is not None and share < 0.99 else 0.0


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _order(task: str) -> tuple[int, str]:
    return (int(task[1]) if task[:1] == "L" and task[1:2].isdigit() else 9, task)


def markdown(summary: dict[str, Any], device: str) -> str:
    rows = list(summary["table"])

    def x(v: float) -> str:
        return f"{v:.2f}x" if v else "-"

    def share(v: float | None) -> str:
        return f"{v:.2f}" if v is not None else "-"

    head = "| task | " + " | ".join(f"{r}: verdict | x eager | x compile | share | judged in" for r in rows)
    lines = [
        f"Measured on {device}; one program per task and row (the paper config: eager and torch.compile "
        "timed in each candidate's own trials); `judged in`: the verdicts file of the run that judged it.",
        "",
        head + " |",
        "|---|" + "---|---|---|---|---|" * len(rows),
    ]
    for task in summary["tasks"]:
        cells = [summary["table"][r][task] for r in rows]
        lines.append(
            f"| {task} | "
            + " | ".join(
                f"{c['verdict']} | {x(c['eager'])} | {x(c['compile'])} | {share(c['share'])} | {c['run']}"
                for c in cells
            )
            + " |"
        )
    lines.append("")
    for row in rows:
        c = summary["counts"][row]
        gm = ", ".join(f"{k} {v:.2f}x" for k, v in c["geomean_eager_by_level"].items() if v)
        sh = ", ".join(f"{k} {v:.2f}" for k, v in c["share_by_level"].items() if v is not None)
        top = ", ".join(f"{k} {v:.2f}x" for k, v in c["ceiling_by_level"].items() if v)
        lines.append(
            f"- {row}: {c['strict']} of {c['judged']} judged strictly correct ({c['tasks']} tasks); "
            f"{c['faster_eager']} at least {FASTER}x eager, {c['faster_compile']} at least {FASTER}x "
            f"torch.compile; geomean of the correct by level: {gm}; median share of the candidate's GPU "
            f"time in its custom kernels: {sh}; geomean if those kernels took no time (the rest is "
            f"PyTorch's): {top}"
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
    r.add_argument(
        "--rows",
        type=Path,
        required=True,
        help="the jobs file `jobs` wrote, or the programs.json `report` wrote",
    )
    r.add_argument("--ids", type=Path, help="the rows' task -> job id (default: beside --rows, .ids.json)")
    r.add_argument(
        "--judged",
        action="append",
        default=[],
        help="JOBS.jsonl=VERDICTS.jsonl of a run (or JOBS: a .json map)",
    )
    r.add_argument(
        "--judged-from", type=Path, help="the judged.json an earlier report wrote: all of its runs"
    )
    r.add_argument(
        "--out",
        type=Path,
        help="write summary.md, summary.json, programs.json and judged.json into this folder",
    )
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
    pairs: Judged = []
    if args.judged_from:
        pairs += [(codes, Path(v)) for v, codes in json.loads(args.judged_from.read_text()).items()]
    pairs += [(programs_of(Path(j)), Path(v)) for j, v in (spec.split("=", 1) for spec in args.judged)]
    if not pairs:
        parser.error("report needs --judged or --judged-from")
    programs = programs_of(args.rows)
    ids = json.loads((args.ids or args.rows.with_suffix(".ids.json")).read_text())
    summary = summarise(programs, judged(pairs), ids)
    gpus = sorted({c["gpu"] for row in summary["table"].values() for c in row.values() if c.get("gpu")})
    device = ", ".join(gpus) or "?"
    text = markdown(summary, device)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "summary.md").write_text(text)
        (args.out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
        used = {job for row in ids.values() for job in row.values()}
        rows_programs = {job: sha for job, sha in sorted(programs.items()) if job in used}
        (args.out / "programs.json").write_text(json.dumps(rows_programs, indent=1) + "\n")
        (args.out / "rows.ids.json").write_text(json.dumps(ids, indent=1) + "\n")
        (args.out / "judged.json").write_text(json.dumps(judged_programs(pairs), indent=1) + "\n")
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
