"""The graph state of every strategy: plain JSON values only, so checkpoints, Studio and job files agree.

Contract (the runner builds against it)
========================================

Input (``Input``, every graph's ``input_schema``): ``{"task": {"name": str, "level": int, "problem_id": int,
"source": str}}`` where ``source`` is the KernelBench problem file text (Model, get_inputs, get_init_inputs).
Nothing else is taken; every other key starts empty.

Output keys (all strategies):

``candidates`` (list, append-only): every evaluated candidate, in evaluation order; ``Candidate`` below
documents every key (a whole program has the common keys, a region candidate the region keys too).

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
    pending: Annotated[list[Candidate], extend_or_reset]
    candidates: Annotated[list[Candidate], operator.add]
    feedback: dict[str, Any] | None
    route: str
    best: dict[str, Any] | None
    events: Annotated[list[dict[str, Any]], operator.add]


class Candidate(TypedDict, total=False):
    """One candidate as generation writes it and evaluation judges it (plain JSON values)."""

    id: str  # "r<round>s<sample>", unique within one graph run
    round: int  # 0-based refinement round
    sample: int  # 0-based index among the round's n samples
    ambition: str  # the cut it was written at (Context.ambition; autotune writes two a sample)
    completion: str  # the model's full answer (region mode: each region's last answer, headed by its id)
    code: str | None  # the extracted or assembled program (None: no code block)
    prompt_tokens: int
    completion_tokens: int
    seconds: float  # generation wall time (region mode: the model's time over every call)
    verdict: dict[str, Any]  # an evaluator.verdict.Verdict, added by evaluation (reused_verdict_of: the id of
    # the candidate whose identical program was judged, when this one was not judged again)
    # region candidates only (regions.assemble writes the first six):
    format: str  # "regions"
    regions: list[dict[str, Any]]  # job-line markers: each kernel is also judged alone on the GPU host
    bodies: dict[str, str]  # region id -> the kernel body in the program
    region_ops: dict[str, list[str]]  # region id -> its ops, for the GPU's wrong-value feedback
    prologues: dict[str, list[str]]  # reduction id -> the maps computed in its kernel (Context.fuse)
    row_maps: dict[str, list[str]]  # map id -> the reductions whose kernel it runs in (Context.fuse)
    costliest: str  # the region the fast second makes faster (by measured share, else estimated cost)
    shapes: dict[str, str]  # region id -> the launch shape the fast second moved it to (the model's choice)
    ruled: dict[str, str]  # region id -> the shape the framework's rules ran its body on (Context.launch)
    local_ok: bool  # every body the model wrote this round passed the local checks
    left: list[str]  # regions whose bodies failed the local checks once repairs were spent: PyTorch runs them
    shape_choices: dict[str, dict[str, Any]]  # region id -> {shape, why, valid}: the model's launch choice


class SampleInput(TypedDict, total=False):
    """What one Send branch of the generate node receives: the state it needs plus its sample index."""

    task: Task
    profile: dict[str, Any] | None
    plan: dict[str, Any] | None
    examples: list[dict[str, Any]]
    round: int
    feedback: dict[str, Any] | None
    last: Candidate | None
    history: list[Candidate]
    sample: int
    ambition: str  # the cut this branch writes at (Context.cuts)
    fallback: str  # why region mode wrote a whole program instead (the trace says it)


class Generated(TypedDict):
    """What one generate branch adds to the graph state: its candidate and its trace event."""

    pending: list[Candidate]
    events: list[dict[str, Any]]


class RegionDraft(SampleInput, total=False):
    """The region writer's working state for one sample (the generate subgraph in region mode): the
    offered regions in graph order, the one being written, and what each got. JSON values only; regions
    and contracts are derived again from the task (regions.offering caches them)."""

    seed: int
    temperature: float
    order: list[str]  # offered region ids, graph order (the agent's plan may narrow them)
    at: int  # index into order of the region being written
    routes: dict[str, list[Any]]  # region id -> [route, what triage said, its body last round]
    current: dict[str, Any] | None  # the region being written: id, shape, new, twin, names, answer
    written: dict[str, dict[str, str]]  # region id -> {"body", "shape"} as it goes into the program
    twins: dict[str, dict[str, Any]]  # twin identity -> regions.assemble.Twin
    reused: dict[str, str]  # region id -> the twin whose body it took
    shaped: dict[str, str]  # region id -> the launch shape it runs on, where not its first contract's
    choices: dict[str, dict[str, Any]]  # region id -> the model's launch-shape choice this round
    attempts: dict[str, dict[str, Any]]  # region id -> nodes.region_writer.RegionAttempt, as a dict
    last_messages: list[dict[str, str]] | None  # the latest prompt, for the trace
    same_cut: bool  # autotune: this cut offers the lead cut's regions, so the branch writes nothing
    pending: list[Candidate]
    events: list[dict[str, Any]]


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
