"""The live progress view: one row per task and strategy with its node, tokens/s and best so far.

On a terminal it is a rich Live table; elsewhere (CI, logs, pipes) each step is one printed line, so a
log shows the same facts in order.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.table import Table

from evaluator.verdict import rank


@dataclass
class Row:
    task: str
    strategy: str
    status: str = "queued"
    node: str = ""
    tokens_per_s: float | None = None
    best: dict[str, Any] | None = None
    started: float | None = None
    seconds: float = 0.0
    tokens: int = 0
    candidates: int = 0


def describe_verdict(verdict: dict[str, Any] | None) -> str:
    if not verdict:
        return "-"
    text = str(verdict.get("verdict", "?"))
    if verdict.get("verdict") == "correct" and not verdict.get("correct_strict"):
        text += " (KB only)"
    if verdict.get("speedup_eager") is not None:
        text += f" {verdict['speedup_eager']:.2f}x"
    return text


class ProgressView:
    """Shows where every (task, strategy) of a sweep stands."""

    def __init__(
        self, pairs: list[tuple[str, str]], console: Console | None = None, live: bool | None = None
    ):
        self.console = console or Console()
        self.rows = {pair: Row(*pair) for pair in pairs}
        self.live = self.console.is_terminal if live is None else live
        self._live: Live | None = None

    def __enter__(self) -> ProgressView:
        if self.live:
            self._live = Live(self._table(), console=self.console, refresh_per_second=4, transient=False)
            self._live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.update(self._table())
            self._live.__exit__(*exc)
            self._live = None

    def status(self, task: str, strategy: str, status: str, note: str = "") -> None:
        row = self.rows[(task, strategy)]
        row.status = status
        if status == "running" and row.started is None:
            row.started = time.monotonic()
        self._show(row, note or status)

    def node_started(self, task: str, strategy: str, node: str) -> None:
        row = self.rows[(task, strategy)]
        row.node = node
        self._refresh()

    def update(
        self, task: str, strategy: str, node: str, update: dict[str, Any], events: list[dict[str, Any]]
    ) -> None:
        """Fold one node's state update into the row: tokens/s, candidates, best verdict so far."""
        row = self.rows[(task, strategy)]
        row.node = node
        for event in events:
            tokens = int(event.get("completion_tokens") or 0)
            seconds = float(event.get("seconds") or 0.0)
            row.seconds += seconds
            row.tokens += tokens
            if tokens and seconds > 0:
                row.tokens_per_s = tokens / seconds
        for candidate in update.get("candidates") or []:
            row.candidates += 1
            verdict = candidate.get("verdict") or {}
            if row.best is None or rank(verdict) > rank(row.best):
                row.best = verdict
        self._show(row, f"{node} done")

    def _show(self, row: Row, what: str) -> None:
        if self._live is not None:
            self._live.update(self._table())
            return
        if not self.live:
            rate = f" {row.tokens_per_s:.1f} tok/s" if row.tokens_per_s else ""
            self.console.print(
                f"[{row.strategy} {row.task}] {what}{rate} best: {describe_verdict(row.best)}",
                highlight=False,
                markup=False,
            )

    def _refresh(self) -> None:
        if self._live is not None:
            self._live.update(self._table())

    def _table(self) -> Table:
        table = Table(title="kernelgraph sweep", expand=False)
        for column in ("task", "strategy", "status", "node", "tok/s", "candidates", "best so far", "s"):
            table.add_column(column)
        for row in self.rows.values():
            elapsed = (
                time.monotonic() - row.started if row.started and row.status == "running" else row.seconds
            )
            table.add_row(
                row.task,
                row.strategy,
                row.status,
                row.node,
                f"{row.tokens_per_s:.1f}" if row.tokens_per_s else "-",
                str(row.candidates),
                describe_verdict(row.best),
                f"{elapsed:.0f}",
            )
        return table
