"""The sweep: run every (task, strategy) graph to its end or its pause, durably, in one process.

Each pair is one checkpointer thread (``<strategy>:<task key>``). Before running a pair the sweep asks the
checkpointer where it stands: finished (no task left: write the result if it is missing), paused on
deferred evaluation (resume it with the results file when every job has a verdict), cut off mid-run by a
kill (tasks left: continue from the last checkpoint; `durability="sync"` has every finished node, and
every finished Send branch, on disk before the next one starts) or new. So a resumed sweep repeats no
finished node and loses no result.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langgraph.types import Command

from graph.runner.deferred import job_lines, resume_map, write_jobs
from graph.runner.progress import ProgressView
from graph.runner.results import ResultsFile, build_result
from graph.runner.suite import task_key
from graph.runner.trace import TraceFile


@dataclass
class SweepOutcome:
    """What a sweep call left behind."""

    finished: list[tuple[str, str]] = field(default_factory=list)
    paused: list[tuple[str, str]] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    jobs_file: Path | None = None
    jobs: int = 0


def thread_id(strategy: str, task: dict[str, Any]) -> str:
    return f"{strategy}:{task_key(task)}"


def paused_jobs(graphs: dict[str, Any], tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every paused graph's jobs, read from the checkpointer without running anything.

    The sweep writes its job file only when it ends; this reads the same lines at any time, also while
    another process is still sweeping the run (SQLite WAL readers do not block it), so the finished part
    of a long sweep can go to the GPU host before the rest is generated.
    """
    return [
        job
        for task in tasks
        for strategy, graph in graphs.items()
        for job in graph_jobs(graph, strategy, task)
    ]


def graph_jobs(graph: Any, strategy: str, task: dict[str, Any]) -> list[dict[str, Any]]:
    """The job-file lines one graph is paused on, from its last checkpoint (none when it is not paused)."""
    snap = graph.get_state({"configurable": {"thread_id": thread_id(strategy, task)}})
    return job_lines(thread_id(strategy, task), list(snap.interrupts))


class Sweep:
    """Drives compiled graphs (sharing one checkpointer) over a task list."""

    def __init__(
        self,
        graphs: dict[str, Any],
        tasks: list[dict[str, Any]],
        context: Any,
        results: ResultsFile,
        trace: TraceFile,
        progress: ProgressView,
        run_info: dict[str, Any],
        job_results: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        self.graphs = graphs
        self.tasks = tasks
        self.context = context
        self.results = results
        self.trace = trace
        self.progress = progress
        self.run_info = run_info
        self.job_results = job_results

    def run(self, jobs_path: Path) -> SweepOutcome:
        """Visit every pair once (task-major, so one task's prompts stay together for the KV cache).

        A pair whose graph raises is reported and left at its last checkpoint, so `--resume` retries it
        from the failing node; the other pairs still run.
        """
        outcome = SweepOutcome()
        pending: list[dict[str, Any]] = []
        for task in self.tasks:
            for strategy in self.graphs:
                pair = (task_key(task), strategy)
                try:
                    state = self._run_pair(task, strategy)
                except Exception as exc:  # one broken graph must not end a long sweep
                    error = f"{type(exc).__name__}: {exc}"[:2000]
                    self.trace.runner_step("error", *pair, error=error)
                    self.progress.status(*pair, "error", error.splitlines()[0][:200])
                    outcome.failed.append(pair)
                    continue
                if state == "paused":
                    outcome.paused.append(pair)
                    pending.extend(graph_jobs(self.graphs[strategy], strategy, task))
                else:
                    outcome.finished.append(pair)
        if pending or jobs_path.exists():
            write_jobs(jobs_path, pending)
            outcome.jobs_file, outcome.jobs = jobs_path, len(pending)
        return outcome

    def _config(self, strategy: str, task: dict[str, Any]) -> dict[str, Any]:
        return {"configurable": {"thread_id": thread_id(strategy, task)}}

    def _run_pair(self, task: dict[str, Any], strategy: str) -> str:
        key = task_key(task)
        if self.results.has(task, strategy):
            self.progress.status(key, strategy, "done", "done earlier")
            return "done"
        graph = self.graphs[strategy]
        config = self._config(strategy, task)
        snap = graph.get_state(config)
        if snap.interrupts:
            answers = resume_map(thread_id(strategy, task), list(snap.interrupts), self.job_results or {})
            if answers is None:
                self.progress.status(key, strategy, "paused", "waiting for evaluation results")
                return "paused"
            self.trace.runner_step("resume", key, strategy, interrupts=list(answers))
            payload: Any = Command(resume=answers)
        elif snap.tasks:
            # Tasks left in the last step: some may be done already (their writes were saved before the
            # kill, so `snap.next` can even be empty); streaming None applies those and runs the rest.
            self.trace.runner_step("continue", key, strategy, tasks=[t.name for t in snap.tasks])
            payload = None
        elif snap.values:
            return self._finish(task, strategy, snap.values)
        else:
            self.trace.runner_step("start", key, strategy)
            payload = {"task": task}
        self.progress.status(key, strategy, "running")
        self._stream(graph, payload, config, key, strategy)
        snap = graph.get_state(config)
        if snap.interrupts:
            jobs = job_lines(thread_id(strategy, task), list(snap.interrupts))
            self.trace.runner_step("interrupt", key, strategy, jobs=[j["job_id"] for j in jobs])
            self.progress.status(key, strategy, "paused", f"paused with {len(jobs)} job(s) to evaluate")
            return "paused"
        if snap.tasks:
            raise RuntimeError(
                f"{strategy} on {key} stopped before its end at {[t.name for t in snap.tasks]}"
            )
        return self._finish(task, strategy, snap.values)

    def _stream(self, graph: Any, payload: Any, config: dict[str, Any], key: str, strategy: str) -> None:
        chunks = graph.stream(
            payload, config, context=self.context, stream_mode=["tasks", "updates"], durability="sync"
        )
        for mode, chunk in chunks:
            if mode == "tasks" and "input" in chunk:
                self.progress.node_started(key, strategy, chunk["name"])
            elif mode == "updates":
                # On resume LangGraph replays the saved writes of a half-finished step, marked cached:
                # those events are already in the trace.
                cached = bool((chunk.get("__metadata__") or {}).get("cached"))
                for node, update in chunk.items():
                    if node.startswith("__") or not isinstance(update, dict):
                        continue
                    events = (
                        update.get("events") or []
                        if cached
                        else self.trace.node_events(key, strategy, node, update)
                    )
                    self.progress.update(key, strategy, node, update, events)

    def _finish(self, task: dict[str, Any], strategy: str, values: dict[str, Any]) -> str:
        key = task_key(task)
        record = build_result(task, strategy, values, self.run_info)
        if self.results.add(record):
            self.trace.runner_step(
                "result",
                key,
                strategy,
                verdict=record["verdict"],
                correct_strict=record["correct_strict"],
                speedup_eager=record["speedup_eager"],
            )
        self.progress.status(key, strategy, "done", f"finished: {record['verdict']}")
        return "done"


def context_record(context: Any) -> dict[str, Any]:
    """The context as recorded with results (a dataclass, a dict or None)."""
    if context is None:
        return {}
    if dataclasses.is_dataclass(context):
        return dataclasses.asdict(context)
    return dict(context)
