"""Jobs: one candidate to judge against one problem, and the one codec for job lines (JSON).
A job line is ``{"job_id", "problem": {"name", "level", "problem_id", "source"}, "candidate", "code"?,
"config"?, "regions"?}``. `candidate` is the model's raw answer. `code` is the program the generator already
extracted from it (null: it found none); when a line has no `code`, the evaluator extracts it here, so every
candidate's code is extracted exactly once. `config` holds EvalConfig overrides, applied over the judging
host's own configuration. The same lines serve job files for a GPU host, local evaluation (tools.evaluator)
and the graph's deferred interrupts. `regions` marks a region candidate (a framework-written program around
model-written kernels, regions.export): one ``{"id", "module", "launch", "spec"}`` per region,
the region as `Region.to_dict` gives it and where its kernel is called from, so the worker can judge each
kernel alone against its region's PyTorch lines as well as the whole program.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluator.config import EvalConfig
from evaluator.extract import extract_candidate
from evaluator.problem import Problem, ProblemError, problem_from_dict, problem_to_dict


@dataclass
class Job:
    """A candidate to judge. Without `extracted`, the code is pulled out of `candidate_text` on creation."""

    job_id: str
    problem: Problem
    candidate_text: str
    config: EvalConfig | None = None
    code: str | None = None
    extracted: bool = False
    regions: list[dict[str, Any]] | None = None

    def __post_init__(self) -> None:
        if not self.extracted:
            self.code = extract_candidate(self.candidate_text)
            self.extracted = True


def job_line(
    job_id: str,
    problem: dict[str, Any] | Problem,
    candidate: str,
    overrides: dict[str, Any] | None = None,
    code: str | None = None,
    extracted: bool = False,
    regions: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A job line; pass `extracted=True` with the `code` the caller already pulled out of `candidate`,
    and `regions` for a region candidate."""
    line: dict[str, Any] = {
        "job_id": job_id,
        "problem": problem_to_dict(problem),
        "candidate": candidate,
        "config": dict(overrides or {}),
    }
    if extracted:
        line["code"] = code
    if regions is not None:
        line["regions"] = regions
    return line


def job_from_line(data: dict[str, Any], base: EvalConfig) -> Job:
    """A Job from a job line, its config overrides applied over `base`; bad lines raise a clear error."""
    if not isinstance(data.get("candidate"), str):
        raise TypeError("candidate must be a string")
    code = data.get("code")
    if code is not None and not isinstance(code, str):
        raise TypeError("code must be a string or null")
    config = base.replace(**data["config"]) if data.get("config") else base
    regions = data.get("regions")
    if regions is not None and not (
        isinstance(regions, list)
        and regions
        and all(isinstance(r, dict) and {"id", "module", "launch", "spec"} <= set(r) for r in regions)
    ):
        raise TypeError("regions must be a non-empty list of objects with id, module, launch and spec")
    return Job(
        str(data["job_id"]),
        problem_from_dict(data["problem"]),
        data["candidate"],
        config,
        code=code,
        extracted="code" in data,
        regions=regions,
    )


def parse_jobs(path: str | Path, base: EvalConfig) -> tuple[list[Job], list[str]]:
    """Valid jobs, and one message per bad line (reported and skipped, never fatal)."""
    jobs: list[Job] = []
    errors: list[str] = []
    seen: set[str] = set()
    for lineno, line in enumerate(Path(path).read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            if str(data["job_id"]) in seen:
                raise ValueError(f"duplicate job_id {data['job_id']!r}")
            jobs.append(job_from_line(data, base))
            seen.add(jobs[-1].job_id)
        except (json.JSONDecodeError, KeyError, TypeError, ValueError, ProblemError) as exc:
            errors.append(f"line {lineno}: {type(exc).__name__}: {exc}")
    return jobs, errors


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


def cut_torn_line(path: str | Path) -> None:
    """A kill in the middle of a write leaves a partial last line: cut it, so the next line appended does
    not fuse with it (the job it held has no verdict and runs again)."""
    p = Path(path)
    if not p.is_file():
        return
    data = p.read_bytes()
    if data and not data.endswith(b"\n"):
        with open(p, "r+b") as handle:
            handle.truncate(data.rfind(b"\n") + 1)
