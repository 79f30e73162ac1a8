"""The evaluator as LangChain tools: judge candidates in the evaluator's isolated subprocesses.

Jobs are job lines (``evaluator.jobs``: ``{"job_id", "problem": {"name","level","problem_id","source"},
"candidate", "code"?, "config", "regions"?}``) so the same dicts serve local evaluation, deferred job files
and the tools' arguments.
"""

from __future__ import annotations

from typing import Any

from langchain_core.tools import tool
from pydantic import BaseModel, Field

from tools.seam import Seam


class ProblemArg(BaseModel):
    """A KernelBench-format problem."""

    name: str = Field(description="Problem name, e.g. 'Scaled_LeakyReLU_Shift'.")
    level: int | None = Field(default=None, description="KernelBench level (1-3), if any.")
    problem_id: int | None = Field(default=None, description="Problem number within its level.")
    source: str = Field(description="The problem file text: Model, get_inputs, get_init_inputs.")


class RegionArg(BaseModel):
    """One region of a region candidate (regions.export.region_markers)."""

    id: str = Field(description="The region's id, e.g. 'r1'.")
    module: str = Field(description="The program's module-level name that holds the region's kernel.")
    launch: str = Field(description="The kernel's launch function on that module.")
    spec: dict[str, Any] = Field(description="The region as regions.model.Region.to_dict gives it.")


class JobArg(BaseModel):
    """One candidate to judge."""

    job_id: str = Field(description="Caller's id for this job; echoed in the result.")
    problem: ProblemArg
    candidate: str = Field(description="The model's answer (a fenced code block defining ModelNew) or code.")
    code: str | None = Field(
        default=None, description="The program already extracted from `candidate`; omit to extract it here."
    )
    config: dict[str, Any] = Field(default_factory=dict, description="EvalConfig overrides, e.g. backend.")
    regions: list[RegionArg] | None = Field(
        default=None, description="A region candidate's regions: each kernel is also judged alone."
    )


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


@tool
def evaluate_candidates(jobs: list[JobArg]) -> list[dict[str, Any]]:
    """Compile, check and time candidate kernels against their KernelBench problems.

    Returns one verdict per job: verdict (no_code, static_reject, compile_error, runtime_error, timeout,
    wrong_output, correct), correct_strict, correct_kernelbench, compiled, speedup_eager, speedup_compile,
    log_tail, static_findings.
    """
    return run_jobs(
        [job.model_dump(exclude_unset=True) if isinstance(job, BaseModel) else dict(job) for job in jobs]
    )


@tool
def evaluate_kernel(problem: ProblemArg, candidate: str, backend: str = "cuda") -> dict[str, Any]:
    """Judge one candidate (CUDA for backend 'cuda', C++ for 'cpu') against one problem; its verdict."""
    from evaluator.jobs import job_line

    task = problem.model_dump() if isinstance(problem, BaseModel) else problem
    return run_jobs([job_line("single", task, candidate, {"backend": backend})])[0]
