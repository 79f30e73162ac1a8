"""Deferred evaluation: gather the paused graphs' candidates into one job file, and map results back.

A graph whose evaluate node interrupted carries ``{"kind": "evaluate", "jobs": [...]}`` as the interrupt's
value (see `nodes.state`). One job file mixes many threads, so each job id is prefixed with its thread id
(``<thread>|<job id>``); resuming strips the prefix and hands every interrupt the results of its own jobs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from graph.runner.jsonl import read_jsonl

SEPARATOR = "|"


def file_job_id(thread_id: str, job_id: str) -> str:
    return f"{thread_id}{SEPARATOR}{job_id}"


def interrupt_jobs(interrupt_value: Any) -> list[dict[str, Any]]:
    """The jobs an evaluate interrupt waits for (empty for any other kind of interrupt)."""
    if isinstance(interrupt_value, dict) and interrupt_value.get("kind") == "evaluate":
        return list(interrupt_value.get("jobs") or [])
    return []


def job_lines(thread_id: str, interrupts: list[Any]) -> list[dict[str, Any]]:
    """Job-file lines for one paused thread: its jobs with thread-prefixed ids."""
    lines = []
    for item in interrupts:
        for job in interrupt_jobs(item.value):
            lines.append(job | {"job_id": file_job_id(thread_id, job["job_id"])})
    return lines


def write_jobs(path: Path, lines: list[dict[str, Any]]) -> None:
    """Write the job file atomically (temp file + rename): a half-written job file is never evaluated."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    tmp.replace(path)


def load_results(path: Path) -> dict[str, dict[str, Any]]:
    """Evaluator results by (prefixed) job id; a job evaluated twice keeps its last verdict."""
    return {line["job_id"]: line for line in read_jsonl(path) if "job_id" in line}


def resume_map(
    thread_id: str, interrupts: list[Any], results: dict[str, dict[str, Any]]
) -> dict[str, Any] | None:
    """``{interrupt id: [result lines with the graph's own job ids]}`` for Command(resume=...).

    None unless every job of every evaluate interrupt of the thread has a result: a partial results file
    leaves the thread paused rather than resuming it with made-up failures.
    """
    answers: dict[str, Any] = {}
    for item in interrupts:
        jobs = interrupt_jobs(item.value)
        if not jobs:
            return None
        lines = []
        for job in jobs:
            result = results.get(file_job_id(thread_id, job["job_id"]))
            if result is None:
                return None
            lines.append(result | {"job_id": job["job_id"]})
        answers[item.id] = lines
    return answers or None
