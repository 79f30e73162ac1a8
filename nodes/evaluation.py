"""Evaluation: judge the round's pending candidates with the evaluator, here or on a GPU host (deferred).

Deferred mode interrupts with the jobs; the graph resumes with the results (``Command(resume=...)``), so
the same graph and state serve a host without a GPU. A node that interrupts re-runs from its start on
resume, so everything before ``interrupt`` is pure.
"""

from __future__ import annotations

import time
from typing import Any, Literal

from langgraph.runtime import Runtime
from langgraph.types import interrupt

from evaluator.jobs import job_line
from evaluator.verdict import missing
from nodes.context import Context, settings
from nodes.select import best_of, rank
from nodes.state import State, event
from tools.evaluator import run_jobs


def job_for(task: dict[str, Any], candidate: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """A job line for one candidate, with the code generation already extracted (never extracted twice)."""
    return job_line(
        f"{task['name']}/{candidate['id']}",
        task,
        candidate["completion"],
        {**ctx.eval_overrides, "backend": ctx.backend},
        code=candidate.get("code"),
        extracted=True,
        regions=candidate.get("regions"),
    )


def evaluate(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Evaluate every pending candidate, append them to ``candidates`` and empty ``pending``.

    A program judged before (an earlier round's, or another sample's this round: the same code, byte for
    byte) is not judged again: it takes that verdict, with ``reused_verdict_of`` naming the candidate."""
    ctx = settings(runtime)
    started = time.perf_counter()
    pending = sorted(state.get("pending") or [], key=lambda c: c["sample"])
    earlier = {c["code"]: c for c in state.get("candidates") or [] if c.get("code")}
    first: dict[str, dict[str, Any]] = {}
    fresh = []
    for candidate in pending:
        code = candidate.get("code")
        if code and code not in earlier and code not in first:
            first[code] = candidate
            fresh.append(candidate)
        elif not code:
            fresh.append(candidate)
    jobs = [job_for(state["task"], c, ctx) for c in fresh]
    if not jobs:
        verdicts = []
    elif ctx.evaluator == "deferred":
        verdicts = match_results(jobs, interrupt({"kind": "evaluate", "jobs": jobs}))
    else:
        verdicts = match_results(jobs, run_jobs(jobs))
    by_id = {c["id"]: v for c, v in zip(fresh, verdicts, strict=True)}
    judged = []
    for candidate in pending:
        if candidate["id"] in by_id:
            judged.append({**candidate, "verdict": by_id[candidate["id"]]})
            continue
        source = earlier.get(candidate["code"]) or first[candidate["code"]]
        verdict = source.get("verdict") or by_id[source["id"]]
        judged.append({**candidate, "verdict": {**verdict, "reused_verdict_of": source["id"]}})
    best = best_of(judged)
    outputs = {
        "verdicts": {c["id"]: c["verdict"].get("verdict") for c in judged},
        "best": best and best["id"],
        "mode": ctx.evaluator,
        "not_judged_again": {
            c["id"]: c["verdict"]["reused_verdict_of"] for c in judged if "reused_verdict_of" in c["verdict"]
        },
    }
    trace = event(
        "evaluate",
        state.get("round", 0),
        seconds=time.perf_counter() - started,
        inputs={"candidates": [c["id"] for c in pending], "backend": ctx.backend},
        outputs=outputs,
    )
    return {"candidates": judged, "pending": None, "events": [trace]}


def match_results(jobs: list[dict[str, Any]], results: Any) -> list[dict[str, Any]]:
    """Verdicts in job order from a list of result lines or a {job_id: verdict} dict; a gap is an error."""
    if isinstance(results, dict) and "job_id" not in results:
        by_id = {str(k): dict(v) for k, v in results.items()}
    else:
        by_id = {str(r["job_id"]): dict(r) for r in (results or [])}
    verdicts = []
    for job in jobs:
        verdict = by_id.get(job["job_id"]) or dict(missing(job["job_id"]))
        verdict.pop("job_id", None)
        verdicts.append(verdict)
    return verdicts


def stop_reached(state: State, ctx: Context) -> bool:
    """Whether a refining strategy has what ``stop_on`` asks for, or has used its ``rounds``."""
    if state.get("round", 0) + 1 >= ctx.rounds:
        return True
    best = best_of(state.get("candidates") or [])
    if best is None or ctx.stop_on == "rounds":
        return False
    strict, _, speedup, _, _ = rank(best)
    return strict and (ctx.stop_on == "correct" or speedup > 1.0)


def after_evaluate(state: State, runtime: Runtime[Context]) -> Literal["triage", "select"]:
    """Loop on to triage unless the context's bound or stop condition says stop."""
    return "select" if stop_reached(state, settings(runtime)) else "triage"
