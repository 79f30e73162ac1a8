"""Which tasks a run covers: the project's demo tasks or a KernelBench-format directory, by level and id.

A task is the graph's input (`nodes.state.Task`: name, level, problem_id, source). Its key, e.g.
``L1/3_Batched_matrix_multiplication``, names it in results, traces and checkpoint thread ids.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evaluator.problem import Problem, load_problem, scan_problems
from graph.demo_tasks import DEMO_LEVEL, demo_paths


class SuiteError(ValueError):
    """A task selection that names nothing or cannot be read."""


def parse_ranges(text: str | None) -> list[int] | None:
    """'1-3,5' -> [1, 2, 3, 5]; None or '' or 'all' -> None (no filter)."""
    if text is None or text.strip() in ("", "all"):
        return None
    numbers: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        low, sep, high = part.partition("-")
        try:
            start = int(low)
            end = int(high) if sep else start
        except ValueError as exc:
            raise SuiteError(f"bad range {part!r}: use numbers like 1-3,5") from exc
        if end < start:
            raise SuiteError(f"bad range {part!r}: the end is before the start")
        numbers.update(range(start, end + 1))
    return sorted(numbers)


def task_key(task: dict[str, Any]) -> str:
    """A stable, unique name for a task within a run."""
    return f"L{task['level']}/{task['name']}"


def as_task(problem: Problem, level: int | None = None) -> dict[str, Any]:
    """The graph's input shape for one problem (optionally relabelled to another level)."""
    if level is not None:
        problem = dataclasses.replace(problem, level=level)
    return {
        "name": problem.name,
        "level": int(problem.level or 0),
        "problem_id": int(problem.problem_id or 0),
        "source": problem.source,
    }


def demo_tasks(ids: list[int] | None = None) -> list[dict[str, Any]]:
    """The project's demo tasks (level 0), optionally only those numbered in `ids`."""
    tasks = [as_task(load_problem(path), DEMO_LEVEL) for path in demo_paths()]
    return [t for t in tasks if ids is None or t["problem_id"] in ids]


def kernelbench_tasks(
    root: Path, levels: list[int] | None, ids: list[int] | None, on_skip: Callable[[str], None] | None = None
) -> list[dict[str, Any]]:
    """Problems of a KernelBench-format directory (``levelN/<id>_<name>.py``). A selected file that is not
    a usable problem is passed to `on_skip` with its reason and left out; without `on_skip` it is an error."""
    if not root.is_dir():
        raise SuiteError(f"KernelBench directory {root} does not exist")
    problems, broken = scan_problems(root, levels=levels, ids=ids)
    for error in broken:
        if on_skip is None:
            raise SuiteError(str(error))
        on_skip(str(error))
    return [as_task(p) for p in problems]


def select_tasks(
    kernelbench_dir: Path | None = None,
    levels: str | None = None,
    problems: str | None = None,
    tasks: str | None = None,
    on_skip: Callable[[str], None] | None = None,
) -> list[dict[str, Any]]:
    """Resolve the CLI's task options into the ordered task list; never empty. A broken problem file goes
    to `on_skip` (see kernelbench_tasks)."""
    if kernelbench_dir is not None:
        selected = kernelbench_tasks(kernelbench_dir, parse_ranges(levels), parse_ranges(problems), on_skip)
    else:
        selected = demo_tasks(parse_ranges(tasks or problems))
    if not selected:
        where = kernelbench_dir or "the demo tasks"
        raise SuiteError(
            f"no task matches level {levels or 'all'}, problems {problems or tasks or 'all'} in {where}"
        )
    return selected
