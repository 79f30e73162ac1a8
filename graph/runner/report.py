"""The per-level table: correct %, fast_1 %, geometric-mean speedups of correct kernels.

Correct means the strict verdict (the evaluator's closing of KernelBench's holes); the KernelBench-compatible
rate is shown beside it so both can be quoted. fast_1 counts strictly correct kernels faster than eager.
Speedups are geometric means over the strictly correct kernels only (None when there are none).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from typing import Any

from rich.table import Table


def _geomean(values: list[float]) -> float | None:
    values = [v for v in values if v is not None and v > 0]
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def summarise(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (strategy, level), in a stable order."""
    groups: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        groups[(record["strategy"], int(record["level"]))].append(record)
    return [
        {"strategy": strategy, "level": level, **metrics(group)}
        for (strategy, level), group in sorted(groups.items())
    ]


def metrics(group: list[dict[str, Any]]) -> dict[str, Any]:
    """The table's figures for a group of results lines (one per task): rates in %, geomean speedups."""
    correct = [r for r in group if r.get("correct_strict")]
    n = len(group)
    return {
        "tasks": n,
        "compiled_pct": 100.0 * sum(bool(r.get("compiled")) for r in group) / n,
        "correct_pct": 100.0 * len(correct) / n,
        "correct_kernelbench_pct": 100.0 * sum(bool(r.get("correct_kernelbench")) for r in group) / n,
        "fast_1_pct": 100.0 * sum((r.get("speedup_eager") or 0) > 1.0 for r in correct) / n,
        "geomean_speedup_eager": _geomean([r.get("speedup_eager") for r in correct]),
        "geomean_speedup_compile": _geomean([r.get("speedup_compile") for r in correct]),
    }


def render(rows: list[dict[str, Any]], title: str = "results per level") -> Table:
    """The summary as a rich table (level 0 = the demo tasks)."""
    table = Table(title=title)
    for column in (
        "strategy",
        "level",
        "tasks",
        "compiled %",
        "correct %",
        "correct (KB) %",
        "fast_1 %",
        "speedup vs eager",
        "speedup vs compile",
    ):
        table.add_column(column, justify="left" if column == "strategy" else "right")
    for row in rows:
        table.add_row(
            row["strategy"],
            "demo" if row["level"] == 0 else str(row["level"]),
            str(row["tasks"]),
            f"{row['compiled_pct']:.0f}",
            f"{row['correct_pct']:.0f}",
            f"{row['correct_kernelbench_pct']:.0f}",
            f"{row['fast_1_pct']:.0f}",
            _fmt(row["geomean_speedup_eager"]),
            _fmt(row["geomean_speedup_compile"]),
        )
    return table


_FENCED = re.compile(r"```[a-z]*\n(.*?)```", re.DOTALL)


def pending(jobs: list[dict[str, Any]]) -> Table:
    """What each paused graph wrote, before any GPU has judged it: per strategy and task, the regions whose
    bodies the model wrote (or a whole program) and the first lines of the first body."""
    table = Table(title=f"written here, waiting for a GPU host ({len(jobs)} candidates)")
    for column in ("strategy", "task", "kernels", "first lines the model wrote"):
        table.add_column(column)
    for job in jobs:
        strategy, _, rest = str(job["job_id"]).partition(":")
        task = rest.split("|")[0]
        regions = [str(r.get("id")) for r in job.get("regions") or []]
        text = str(job.get("candidate") or "")
        found = _FENCED.search(text)
        lines = [ln.strip() for ln in (found.group(1) if found else text).splitlines() if ln.strip()]
        shown = " ".join(lines[:2])
        table.add_row(
            strategy,
            task,
            ", ".join(regions) if regions else "whole program",
            (shown[:77] + "...") if len(shown) > 80 else shown or "(no code)",
        )
    return table


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"
