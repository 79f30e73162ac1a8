"""trace.jsonl: every node event of every graph, as the nodes recorded them, plus the runner's own steps.

Node events carry brief inputs and outputs, the full prompt and completion, tokens and seconds (the
`events` contract of `nodes.state`); the runner adds when, which task and strategy, and its own steps
(start, resume, interrupt with the jobs it waits for, result).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from graph.runner.jsonl import JsonlLog


class TraceFile:
    """The trace of one run directory, appended to as events arrive."""

    def __init__(self, path: Path) -> None:
        self._log = JsonlLog(path)

    def node_events(
        self, task: str, strategy: str, node: str, update: dict[str, Any]
    ) -> list[dict[str, Any]]:
        """Write the events a node's state update carries; returns them for the progress view."""
        events = list(update.get("events") or [])
        for event in events:
            self._write("node", task, strategy, event | {"update_of": node})
        return events

    def runner_step(self, kind: str, task: str, strategy: str, **fields: Any) -> None:
        self._write(kind, task, strategy, fields)

    def close(self) -> None:
        self._log.close()

    def _write(self, kind: str, task: str, strategy: str, fields: dict[str, Any]) -> None:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + f".{int(time.time() * 1000) % 1000:03d}Z"
        self._log.write({"time": stamp, "kind": kind, "task": task, "strategy": strategy} | fields)
