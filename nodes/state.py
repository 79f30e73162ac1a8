"""The graph state of every strategy: plain JSON values only, so checkpoints, Studio and job files agree.

Contract (the runner builds against it)
========================================

Input (``Input``, every graph's ``input_schema``): ``{"task": {"name": str, "level": int, "problem_id": int,
"source": str}}`` where ``source`` is the KernelBench problem file text (Model, get_inputs, get_init_inputs).
Nothing else is taken; every other key starts empty.

Output keys (all strategies):

``candidates`` (list, append-only): every evaluated candidate, in evaluation order::

    {"id": "r0s1",             # round and sample, unique within one graph run
     "round": int,             # 0-based refinement round
     "sample": int,            # 0-based index among the round's n samples
     "completion": str,        # the model's full answer
     "code": str | None,       # the extracted candidate source (None: no code block)
     "prompt_tokens": int, "completion_tokens": int,
     "seconds": float,         # generation wall time
     "verdict": dict}          # an evaluator.verdict.Verdict (verdict, correct_kernelbench,
                               # correct_strict, compiled, speedup_eager, speedup_compile, log_tail, ...)

``best``: the best candidate dict (same shape) or None when nothing was evaluated: correct first
(``correct_strict``, then ``correct_kernelbench``), then ``speedup_eager``, then how far it got
(wrong_output > runtime_error = timeout > compile_error > static_reject > no_code), then the earliest
(nodes.select.rank).

``events`` (list, append-only): one per node step, in completion order, for trace.jsonl::

    {"node": str,              # profile | analysis | retrieval | generate | evaluate | triage | select
     "round": int,
     "sample": int | None,     # generate only
     "inputs": dict,           # brief: sizes, ids, categories (never the whole source)
     "outputs": dict,          # brief: verdicts, plan summary, instruction, best id
     "messages": list[dict] | None,   # the full chat prompt sent to the model ({"role","content"})
     "completion": str | None,        # the full model answer
     "prompt_tokens": int, "completion_tokens": int,
     "seconds": float}                # node wall time

Working keys (read them if useful, do not rely on their inner shape across versions): ``profile``
({"text": str, ...} or None), ``plan`` (analysis JSON or None), ``examples`` (retrieved corpus entries),
``round`` (int, the current round), ``pending`` (generated, not yet evaluated candidates; reset by
evaluation), ``feedback`` (triage result: {"category", "instruction", "error", "source": "rules" | "model" |
"naive"}), ``route`` (triage's decision: "retry" | "replan"; stopping is decided right after evaluation),
``replans`` (int).

Deferred evaluation (Context.evaluator == "deferred"): the ``evaluate`` node calls
``interrupt({"kind": "evaluate", "jobs": [job, ...]})`` where each job is a job line (evaluator.jobs)
``{"job_id": str, "problem": {"name","level","problem_id","source"}, "candidate": str, "code": str | None,
"config": {...}}``
(``job_id`` = ``"<task name>/r<round>s<sample>"``, unique within one graph run: a job file that mixes
threads must prefix it per thread, as graph.runner.deferred does, and strip the prefix again to resume
with the ids exactly as given here). Resume with ``Command(resume=results)`` where ``results`` is a
list of result lines ``{"job_id": str, ...verdict}`` (a non-empty dict ``{job_id: verdict}`` also works; an
empty dict is LangGraph's own interrupt-id map, so pass a list); a job missing from the results gets a
``runtime_error`` verdict saying so. One interrupt per evaluation round: a refining graph pauses once per
round it evaluates.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any

from typing_extensions import TypedDict  # pydantic, hence Studio's input form, needs it on Python < 3.12


def extend_or_reset(left: list[Any] | None, right: list[Any] | None) -> list[Any]:
    """Reducer for ``pending``: Send branches append their sample; ``None`` empties it for a new round."""
    if right is None:
        return []
    return (left or []) + list(right)


class Task(TypedDict):
    """One KernelBench-format problem as the graph sees it."""

    name: str
    level: int
    problem_id: int
    source: str


class Input(TypedDict):
    """What a graph run takes (its ``input_schema``): the task alone, so Studio's input form shows only it."""

    task: Task


class State(TypedDict, total=False):
    """Graph state; see the module docstring for the contract."""

    task: Task
    profile: dict[str, Any] | None
    plan: dict[str, Any] | None
    examples: list[dict[str, Any]]
    round: int
    replans: int
    pending: Annotated[list[dict[str, Any]], extend_or_reset]
    candidates: Annotated[list[dict[str, Any]], operator.add]
    feedback: dict[str, Any] | None
    route: str
    best: dict[str, Any] | None
    events: Annotated[list[dict[str, Any]], operator.add]


class SampleInput(TypedDict, total=False):
    """What one Send branch of the generate node receives: the state it needs plus its sample index."""

    task: Task
    profile: dict[str, Any] | None
    plan: dict[str, Any] | None
    examples: list[dict[str, Any]]
    round: int
    feedback: dict[str, Any] | None
    last: dict[str, Any] | None
    history: list[dict[str, Any]]
    sample: int


def event(
    node: str,
    round_: int,
    *,
    seconds: float,
    sample: int | None = None,
    inputs: dict[str, Any] | None = None,
    outputs: dict[str, Any] | None = None,
    messages: list[dict[str, str]] | None = None,
    completion: str | None = None,
    prompt_tokens: int = 0,
    completion_tokens: int = 0,
) -> dict[str, Any]:
    """Build one trace event in the shape the module docstring promises."""
    return {
        "node": node,
        "round": round_,
        "sample": sample,
        "inputs": inputs or {},
        "outputs": outputs or {},
        "messages": messages,
        "completion": completion,
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "seconds": round(seconds, 3),
    }
