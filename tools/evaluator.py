"""The evaluator seam: judge job lines in the evaluator's isolated subprocesses.

Jobs are job lines (``evaluator.jobs``), the same dicts that deferred job files and the graph's evaluate
interrupts carry; results are result lines (a verdict with its ``job_id``), as ``python -m evaluator run``
writes them, so local and deferred results are matched to jobs the same way (nodes.evaluation).
"""

from __future__ import annotations

from typing import Any

from tools.seam import Seam


def _run_jobs(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Evaluate with the evaluator (parallel builds, isolated runs); one result line per job, in order."""
    from evaluator.api import EvalConfig, evaluate_many
    from evaluator.jobs import job_from_line

    batch = [job_from_line(job, EvalConfig()) for job in jobs]
    verdicts = evaluate_many(batch, batch[0].config)
    return [{"job_id": job.job_id, **verdict} for job, verdict in zip(batch, verdicts, strict=True)]


EVALUATOR: Seam = Seam(_run_jobs)


def run_jobs(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Evaluate job dicts with the current implementation (the real evaluator unless a test swapped it)."""
    return EVALUATOR.current(jobs) if jobs else []
