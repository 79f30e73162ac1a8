"""The sweep over toy graphs that keep the state contract: results, dedup, deferred, crash-resume.

The toy graphs stand in for the strategy builders so these tests pin the runner alone; the strategies' real
graphs are driven through run.py in tests/test_run_cli.py.
"""

from __future__ import annotations

import json
import operator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send, interrupt
from rich.console import Console

from evaluator.verdict import Verdict, make
from graph.runner.jsonl import read_jsonl
from graph.runner.progress import ProgressView
from graph.runner.results import ResultsFile
from graph.runner.rundir import RunDir
from graph.runner.suite import select_tasks, task_key
from graph.runner.sweep import Sweep, paused_jobs
from graph.runner.trace import TraceFile
from nodes.context import Context


class ToyState(TypedDict, total=False):
    task: dict[str, Any]
    candidates: Annotated[list[dict[str, Any]], operator.add]
    pending: list[dict[str, Any]]
    best: dict[str, Any] | None
    events: Annotated[list[dict[str, Any]], operator.add]


def _verdict(code: str) -> Verdict:
    if code.endswith("good"):
        return make("correct", speedup_eager=1.25)
    return make("compile_error")


def toy_graph(
    calls: list[str], crash_in: set[str] | None = None, crash_with: type[BaseException] = KeyboardInterrupt
):
    """generate -> evaluate (interrupts when deferred) -> select; `crash_in` names nodes that raise once."""
    crash_in = crash_in if crash_in is not None else set()

    def generate(state: ToyState) -> dict[str, Any]:
        calls.append(f"generate:{state['task']['name']}")
        code = f"{state['task']['name']}:" + ("good" if state["task"]["problem_id"] % 2 else "bad")
        return {
            "pending": [{"id": "r0s0", "code": code}],
            "events": [{"node": "generate", "completion_tokens": 40, "seconds": 2.0, "completion": code}],
        }

    def evaluate(state: ToyState, runtime: Runtime[Context]) -> dict[str, Any]:
        if "evaluate" in crash_in:
            crash_in.discard("evaluate")
            raise crash_with("simulated kill")
        pending = state["pending"]
        if runtime.context.evaluator == "deferred":
            jobs = [
                {
                    "job_id": f"{state['task']['name']}/{c['id']}",
                    "problem": state["task"],
                    "candidate": c["code"],
                    "config": {},
                }
                for c in pending
            ]
            answers = interrupt({"kind": "evaluate", "jobs": jobs})
            verdicts = [{k: v for k, v in a.items() if k != "job_id"} for a in answers]
        else:
            verdicts = [_verdict(c["code"]) for c in pending]
        calls.append(f"evaluate:{state['task']['name']}")
        done = [c | {"verdict": v} for c, v in zip(pending, verdicts, strict=True)]
        return {
            "candidates": done,
            "events": [
                {
                    "node": "evaluate",
                    "seconds": 0.5,
                    "outputs": {"verdicts": [v["verdict"] for v in verdicts]},
                }
            ],
        }

    def select(state: ToyState) -> dict[str, Any]:
        best = max(state["candidates"], key=lambda c: bool(c["verdict"]["correct_strict"]))
        return {"best": best, "events": [{"node": "select", "seconds": 0.0}]}

    builder = StateGraph(ToyState, context_schema=Context)
    for name, fn in (("generate", generate), ("evaluate", evaluate), ("select", select)):
        builder.add_node(name, fn)
    builder.add_edge(START, "generate")
    builder.add_edge("generate", "evaluate")
    builder.add_edge("evaluate", "select")
    builder.add_edge("select", END)
    return builder


def sweep(
    run: RunDir,
    context: Context,
    calls: list[str],
    crash_in: set[str] | None = None,
    job_results: dict | None = None,
    strategies: tuple[str, ...] = ("toy_a", "toy_b"),
    crash_with: type[BaseException] = KeyboardInterrupt,
):
    tasks = select_tasks(tasks="1-2")
    pairs = [(task_key(t), s) for t in tasks for s in strategies]
    results, trace = ResultsFile(run.results), TraceFile(run.trace)
    try:
        with run.checkpointer() as saver:
            graphs = {
                s: toy_graph(calls, crash_in, crash_with).compile(checkpointer=saver) for s in strategies
            }
            with ProgressView(pairs, console=Console(file=open("/dev/null", "w")), live=False) as progress:
                return Sweep(
                    graphs, tasks, context, results, trace, progress, {"model": {"name": "toy"}}, job_results
                ).run(run.jobs)
    finally:
        results.close()
        trace.close()


def test_local_sweep_writes_one_result_per_pair_and_skips_them_after(tmp_path: Path) -> None:
    run, calls = RunDir(tmp_path), []
    outcome = sweep(run, Context(evaluator="local"), calls)
    assert len(outcome.finished) == 4 and not outcome.paused and outcome.jobs_file is None
    lines = read_jsonl(run.results)
    assert sorted((r["task"], r["strategy"]) for r in lines) == sorted(outcome.finished)
    verdicts = {(r["task"], r["strategy"]): r["verdict"] for r in lines}
    assert verdicts[("L0/Scaled_LeakyReLU_Shift", "toy_a")] == "correct"
    assert verdicts[("L0/Row_Sum_Of_Squares", "toy_b")] == "compile_error"
    assert {r["model"]["name"] for r in lines} == {"toy"}
    trace = read_jsonl(run.trace)
    assert [e["node"] for e in trace if e["kind"] == "node"].count("generate") == 4
    assert sum(e["kind"] == "result" for e in trace) == 4
    before = len(calls)
    sweep(run, Context(evaluator="local"), calls)  # a second visit redoes nothing
    assert len(calls) == before and len(read_jsonl(run.results)) == 4


def test_deferred_sweep_pauses_writes_one_job_file_and_resumes_from_results(tmp_path: Path) -> None:
    run, calls = RunDir(tmp_path), []
    context = Context(evaluator="deferred")
    outcome = sweep(run, context, calls)
    assert len(outcome.paused) == 4 and outcome.jobs == 4 and not read_jsonl(run.results)
    jobs = read_jsonl(run.jobs)
    assert len({j["job_id"] for j in jobs}) == 4 and all("|" in j["job_id"] for j in jobs)
    # What `python -m evaluator run` would write: one line per job id (here a scripted verdict).
    verdicts = {j["job_id"]: {"job_id": j["job_id"]} | _verdict(j["candidate"]) for j in jobs}
    generated = calls.count("generate:Scaled_LeakyReLU_Shift")
    outcome = sweep(run, context, calls, job_results=verdicts)
    assert len(outcome.finished) == 4 and not outcome.paused and read_jsonl(run.jobs) == []
    assert calls.count("generate:Scaled_LeakyReLU_Shift") == generated  # resumed, not regenerated
    lines = {(r["task"], r["strategy"]): r for r in read_jsonl(run.results)}
    assert lines[("L0/Scaled_LeakyReLU_Shift", "toy_b")]["speedup_eager"] == 1.25
    assert lines[("L0/Row_Sum_Of_Squares", "toy_a")]["verdict"] == "compile_error"


def test_partial_results_leave_the_other_graphs_paused(tmp_path: Path) -> None:
    run, calls = RunDir(tmp_path), []
    context = Context(evaluator="deferred")
    sweep(run, context, calls)
    first = read_jsonl(run.jobs)[0]
    outcome = sweep(
        run, context, calls, job_results={first["job_id"]: {"job_id": first["job_id"]} | _verdict("x")}
    )
    assert len(outcome.finished) == 1 and len(outcome.paused) == 3 and outcome.jobs == 3


def test_paused_jobs_read_from_the_checkpoints_match_the_job_file(tmp_path: Path) -> None:
    """What `run.py --resume DIR --write-jobs` writes: no graph runs, no model call."""
    run, calls = RunDir(tmp_path), []
    context = Context(evaluator="deferred")
    sweep(run, context, calls)
    first = read_jsonl(run.jobs)[0]
    sweep(run, context, calls, job_results={first["job_id"]: {"job_id": first["job_id"]} | _verdict("x")})
    before = list(calls)
    with run.checkpointer() as saver:
        graphs = {s: toy_graph(calls).compile(checkpointer=saver) for s in ("toy_a", "toy_b")}
        lines = paused_jobs(graphs, select_tasks(tasks="1-2"))
    assert lines == read_jsonl(run.jobs) and len(lines) == 3 and first not in lines
    assert calls == before


def test_a_crash_mid_graph_resumes_from_the_checkpoint(tmp_path: Path) -> None:
    run, calls = RunDir(tmp_path), []
    with pytest.raises(KeyboardInterrupt):
        sweep(run, Context(), calls, crash_in={"evaluate"}, strategies=("toy_a",))
    assert calls == ["generate:Scaled_LeakyReLU_Shift"] and read_jsonl(run.results) == []
    outcome = sweep(run, Context(), calls, strategies=("toy_a",))
    assert len(outcome.finished) == 2
    assert calls.count("generate:Scaled_LeakyReLU_Shift") == 1  # the finished node was not redone
    assert json.loads(run.results.read_text().splitlines()[0])["verdict"] == "correct"


def fan_out_graph(crash: dict[str, bool]):
    """Two Send branches in one step; branch 1 raises once (a kill between the branches' writes)."""

    def fan(state: ToyState) -> list[Send]:
        return [Send("sample", {"task": state["task"], "i": i}) for i in range(2)]

    def sample(inp: dict[str, Any]) -> dict[str, Any]:
        if inp["i"] == 1 and crash.pop("sample", False):
            raise KeyboardInterrupt("simulated kill")
        candidate = {"id": f"r0s{inp['i']}", "code": "x", "verdict": _verdict("good" if inp["i"] else "bad")}
        return {"candidates": [candidate], "events": [{"node": "sample", "sample": inp["i"], "seconds": 0.1}]}

    def select(state: ToyState) -> dict[str, Any]:
        return {"best": max(state["candidates"], key=lambda c: bool(c["verdict"]["correct_strict"]))}

    builder = StateGraph(ToyState, context_schema=Context)
    builder.add_node("sample", sample)
    builder.add_node("select", select)
    builder.add_conditional_edges(START, fan, ["sample"])
    builder.add_edge("sample", "select")
    builder.add_edge("select", END)
    return builder


def test_a_finished_send_branch_is_neither_rerun_nor_traced_twice(tmp_path: Path) -> None:
    run, crash = RunDir(tmp_path), {"sample": True}
    tasks = select_tasks(tasks="1")
    pairs = [(task_key(tasks[0]), "fan")]

    def once() -> None:
        results, trace = ResultsFile(run.results), TraceFile(run.trace)
        try:
            with run.checkpointer() as saver:
                graphs = {"fan": fan_out_graph(crash).compile(checkpointer=saver)}
                with ProgressView(
                    pairs, console=Console(file=open("/dev/null", "w")), live=False
                ) as progress:
                    Sweep(graphs, tasks, Context(), results, trace, progress, {}).run(run.jobs)
        finally:
            results.close()
            trace.close()

    with pytest.raises(KeyboardInterrupt):
        once()
    once()
    samples = [e["sample"] for e in read_jsonl(run.trace) if e["kind"] == "node"]
    assert sorted(samples) == [0, 1]
    (result,) = read_jsonl(run.results)
    assert len(result["candidates"]) == 2 and result["verdict"] == "correct"


def test_a_failing_graph_is_reported_and_retried_on_resume_while_the_others_finish(tmp_path: Path) -> None:
    run, calls = RunDir(tmp_path), []
    # evaluate raises once, as a node bug would; the resume no longer meets it
    outcome = sweep(
        run, Context(), calls, crash_in={"evaluate"}, crash_with=RuntimeError, strategies=("toy_a",)
    )
    assert outcome.failed == [("L0/Scaled_LeakyReLU_Shift", "toy_a")]
    assert outcome.finished == [("L0/Row_Sum_Of_Squares", "toy_a")]
    assert [e["kind"] for e in read_jsonl(run.trace)].count("error") == 1
    outcome = sweep(run, Context(), calls, strategies=("toy_a",))
    assert not outcome.failed and len(read_jsonl(run.results)) == 2
    assert calls.count("generate:Scaled_LeakyReLU_Shift") == 1  # retried from the failing node


def test_a_kill_between_a_nodes_saved_writes_and_the_next_checkpoint_continues_the_graph(
    tmp_path: Path,
) -> None:
    """The window where LangGraph reports no `next` node although the graph has not finished."""
    run, calls = RunDir(tmp_path), []
    tasks = select_tasks(tasks="1")
    pairs = [(task_key(tasks[0]), "toy_a")]

    def once(kill_at_step: int | None) -> None:
        results, trace = ResultsFile(run.results), TraceFile(run.trace)
        try:
            with run.checkpointer() as saver:
                put = saver.put

                def put_then_die(config, checkpoint, metadata, new_versions):
                    if metadata.get("step") == kill_at_step:
                        raise KeyboardInterrupt("killed after generate's writes, before the checkpoint")
                    return put(config, checkpoint, metadata, new_versions)

                saver.put = put_then_die
                graphs = {"toy_a": toy_graph(calls).compile(checkpointer=saver)}
                with ProgressView(
                    pairs, console=Console(file=open("/dev/null", "w")), live=False
                ) as progress:
                    Sweep(graphs, tasks, Context(), results, trace, progress, {}).run(run.jobs)
        finally:
            results.close()
            trace.close()

    with pytest.raises(KeyboardInterrupt):
        once(kill_at_step=1)
    assert calls == ["generate:Scaled_LeakyReLU_Shift"]
    once(kill_at_step=None)
    (result,) = read_jsonl(run.results)
    assert result["verdict"] == "correct" and len(result["candidates"]) == 1
    assert calls == ["generate:Scaled_LeakyReLU_Shift", "evaluate:Scaled_LeakyReLU_Shift"]
    assert "continue" in [e["kind"] for e in read_jsonl(run.trace)]
