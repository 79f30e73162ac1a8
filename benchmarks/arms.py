"""One table from an A/B run: the same tasks sent in several arms, each job id ending in its arm.

An arm is whatever differs between the copies of a task's job (`/old` and `/ruled`: the program before and
after a change of launch shape; `/old` and `/new`: the same program judged by the old and the new
launcher). The arms go to one GPU run, so their timings compare; this reads the verdicts back:

    python -m benchmarks.arms VERDICTS.jsonl [MORE.jsonl ...] --arms old,ruled [--tasks L1/] [--out DIR]

Each cell counts its speedups only where the verdict is strictly correct; a task an arm lacks shows `-`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from benchmarks.ruled import cell, counts, geomean, task_of
from evaluator.verdict import best
from graph.runner.jsonl import read_jsonl
from nodes.context import AUTOTUNE_CUTS


def kept(
    verdicts: list[dict[str, Any]], arms: list[str]
) -> dict[tuple[str, str], tuple[dict[str, Any], int]]:
    """(task, arm) -> the verdict the graph's select keeps among that arm's candidates of the task
    (evaluator.verdict.best: strictly correct first, then the fastest over eager), and how many there
    were; for every job id ending in `/<arm>` (the last verdict of a job wins)."""
    last = {str(v.get("job_id", "")): v for v in verdicts}
    grouped: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for job_id, verdict in last.items():
        stem, _, arm = job_id.rpartition("/")
        if arm in arms:
            grouped.setdefault((task_of(stem), arm), []).append(verdict)
    return {key: (best(found, lambda v: v) or found[0], len(found)) for key, found in grouped.items()}


def by_arm(verdicts: list[dict[str, Any]], arms: list[str]) -> dict[str, dict[str, dict[str, Any]]]:
    """Task -> arm -> its cell; where an arm holds several candidates of a task (n samples, autotune's two
    cuts, rounds), the one select keeps (`kept`), named."""
    table: dict[str, dict[str, dict[str, Any]]] = {}
    for (task, arm), (verdict, count) in kept(verdicts, arms).items():
        # which of several it kept: the candidate id (`r0s0-moderate`: autotune's moderate cut)
        named = {"kept": str(verdict["job_id"]).rsplit("/", 2)[-2]} if count > 1 else {}
        table.setdefault(task, {})[arm] = cell(verdict) | named
    return table


def copies(verdicts: list[dict[str, Any]], same: list[dict[str, str]]) -> list[dict[str, Any]]:
    """The verdicts of jobs sent once for several (benchmarks.arm_jobs --once): each copy's id on the
    judged program's verdict (`same_as` names it); a copy whose program was not judged gets none."""
    by_id = {str(v.get("job_id")): v for v in verdicts}
    return [
        {**by_id[judged], "job_id": copy, "same_as": judged}
        for mapping in same
        for copy, judged in mapping.items()
        if judged in by_id
    ]


def by_cut(verdict: dict[str, Any]) -> dict[str, Any]:
    """The verdict with its arm named by the autotune cut its candidate was written at (`…/r0s0/model` ->
    `model.aggressive`, `…/r0s0-moderate/model` -> `model.moderate`): each cut alone, from the same run."""
    stem, _, arm = str(verdict.get("job_id", "")).rpartition("/")
    _, dash, cut = stem.rpartition("/")[2].partition("-")
    return {**verdict, "job_id": f"{stem}/{arm}.{cut if dash else AUTOTUNE_CUTS[0]}"}


def by_round(verdict: dict[str, Any]) -> dict[str, Any]:
    """The verdict with its arm named by the round its candidate was written in (`…/r1s0/model` ->
    `model.r1`): a refining run's first answers against its later ones, from the same GPU run."""
    stem, _, arm = str(verdict.get("job_id", "")).rpartition("/")
    candidate = stem.rpartition("/")[2]
    return {**verdict, "job_id": f"{stem}/{arm}.{candidate.partition('s')[0]}"}


def summarise(table: dict[str, dict[str, dict[str, Any]]], arms: list[str]) -> dict[str, Any]:
    """Per arm: tasks judged, strictly correct, at least 1.05x eager and torch.compile, geomean of the
    correct over the tasks every arm got right (so the arms' geomeans compare)."""
    common = [t for t, cells in table.items() if all(cells.get(a, {}).get("strict") for a in arms)]
    out: dict[str, Any] = {"tasks_every_arm_got_right": len(common)}
    first = arms[0]
    for arm in arms:
        cells = [cells[arm] for cells in table.values() if arm in cells]
        out[arm] = counts(cells) | {
            "geomean_eager_common": geomean([table[t][arm]["eager"] for t in common]),
            # the first arm's own time over this arm's: each candidate's median, no reference in it (a
            # reference timed in another process moves a speedup by itself: 2.4 vs 3.4 ms measured)
            f"time_{first}_over_this": geomean(
                [table[t][first]["ms"] / table[t][arm]["ms"] for t in common if table[t][arm].get("ms")]
            ),
            # the custom kernels' share of the candidate's GPU time, averaged over its strict cells
            "mean_share": _mean([c["share"] for c in cells if c["strict"] and c.get("share") is not None]),
        }
    return out


def markdown(
    table: dict[str, dict[str, dict[str, Any]]], summary: dict[str, Any], arms: list[str], device: str
) -> str:
    def x(v: float) -> str:
        return f"{v:.2f}x" if v else "-"

    def ms(v: float | None) -> str:
        return f"{v:.4g}" if v else "-"

    def share(c: dict[str, Any]) -> str:
        return f"{c['share']:.2f}" if c["strict"] and c.get("share") is not None else "-"

    head = " | ".join(f"{a}: verdict | x eager | x compile | ms | share" for a in arms)
    lines = [
        f"Measured on {device}; every arm in one run.",
        "",
        f"| task | {head} |",
        "|---|" + "---|" * 5 * len(arms),
    ]
    for task in sorted(table):
        cells = [table[task].get(a) for a in arms]
        lines.append(
            f"| {task} | "
            + " | ".join(
                f"{_kept(c)} | {x(c['eager'])} | {x(c['compile'])} | {ms(c.get('ms'))} | {share(c)}"
                if c
                else "- | - | - | - | -"
                for c in cells
            )
            + " |"
        )
    lines.append("")
    for arm in arms:
        s = summary[arm]
        gm = f"{s['geomean_eager_common']:.2f}x" if s["geomean_eager_common"] else "-"
        ratio = s[f"time_{arms[0]}_over_this"]
        own = (
            f"; the candidates' own times, {arms[0]}'s over {arm}'s: {ratio:.2f}x (geomean)"
            if ratio and arm != arms[0]
            else ""
        )
        lines.append(
            f"- {arm}: {s['strict']} of {s['tasks']} strictly correct; {s['faster_eager']} at least 1.05x "
            f"eager, {s['faster_compile']} at least 1.05x torch.compile; geomean {gm} eager over the "
            f"{summary['tasks_every_arm_got_right']} tasks every arm got right{own}"
            + (
                f"; custom kernels' mean share of its GPU time {s['mean_share']:.2f}"
                if s["mean_share"]
                else ""
            )
        )
    return "\n".join(lines) + "\n"


def _kept(c: dict[str, Any]) -> str:
    """The verdict, and which candidate the cell kept where the arm had several."""
    return f"{c['verdict']} ({c['kept']})" if "kept" in c else str(c["verdict"])


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("verdicts", nargs="+", type=Path)
    parser.add_argument("--arms", required=True, help="comma-separated job id suffixes, in column order")
    parser.add_argument("--tasks", default="", help="only the tasks whose name starts so, e.g. L1/")
    parser.add_argument("--out", type=Path, help="write summary.md and summary.json into this folder")
    parser.add_argument(
        "--same",
        type=Path,
        action="append",
        default=[],
        help="a benchmarks.arm_jobs --once map (copy's id -> judged id): each copy takes that verdict",
    )
    parser.add_argument(
        "--by-cut",
        action="store_true",
        help="an autotune run's cuts as arms of their own: ARM.aggressive, ARM.moderate (in --arms)",
    )
    parser.add_argument(
        "--by-round",
        action="store_true",
        help="a refining run's rounds as arms of their own: ARM.r0, ARM.r1, ... (in --arms)",
    )
    args = parser.parse_args(argv)
    if args.by_cut and args.by_round:
        parser.error("--by-cut and --by-round name the arms two ways: give one")
    arms = [a for a in args.arms.split(",") if a]
    judged = [v for path in args.verdicts for v in read_jsonl(path)]
    split = by_cut if args.by_cut else by_round if args.by_round else None
    verdicts = [
        split(v) if split else v
        for v in judged + copies(judged, [json.loads(p.read_text()) for p in args.same])
        if task_of(str(v.get("job_id", ""))).startswith(args.tasks)
    ]
    devices = {str((v.get("evidence") or {}).get("gpu") or "") for v in verdicts} - {""}
    table = by_arm(verdicts, arms)
    summary = summarise(table, arms)
    text = markdown(table, summary, arms, ", ".join(sorted(devices)) or "the GPU of the verdicts")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "summary.md").write_text(text)
        (args.out / "summary.json").write_text(json.dumps({"rows": table, **summary}, indent=1) + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
