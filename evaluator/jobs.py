"""Job files (JSONL in) and result files (JSONL out) for deferred evaluation on a GPU host."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evaluator.api import Job
from evaluator.config import EvalConfig
from evaluator.problem import ProblemError, problem_from_source


def parse_jobs(path: str | Path, base: EvalConfig) -> tuple[list[Job], list[str]]:
    """Valid jobs, and one message per bad line (reported and skipped, never fatal)."""
    jobs: list[Job] = []
    errors: list[str] = []
    seen: set[str] = set()
    for lineno, line in enumerate(Path(path).read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            jobs.append(_job(json.loads(line), base, seen))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError, ProblemError) as exc:
            errors.append(f"line {lineno}: {type(exc).__name__}: {exc}")
    return jobs, errors


def _job(data: dict[str, Any], base: EvalConfig, seen: set[str]) -> Job:
    job_id = str(data["job_id"])
    if job_id in seen:
        raise ValueError(f"duplicate job_id {job_id!r}")
    seen.add(job_id)
    p = data["problem"]
    problem = problem_from_source(
        p["source"], name=p.get("name", "problem"), level=p.get("level"), problem_id=p.get("problem_id")
    )
    if not isinstance(data["candidate"], str):
        raise TypeError("candidate must be a string")
    config = base.replace(**data["config"]) if data.get("config") else base
    return Job(job_id, problem, data["candidate"], config)


def finished_ids(path: str | Path) -> set[str]:
    """Job ids already in a results file: a rerun skips them (resumable)."""
    p = Path(path)
    if not p.exists():
        return set()
    done = set()
    for line in p.read_text().splitlines():
        try:
            done.add(str(json.loads(line)["job_id"]))
        except (json.JSONDecodeError, KeyError, TypeError):
            continue  # a line cut short by a kill: that job runs again
    return done
