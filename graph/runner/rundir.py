"""A run directory: the settings of a sweep and the files it writes, so `--resume DIR` needs nothing else.

run.json            strategies, tasks (with their sources), context, model choice
checkpoints.sqlite  LangGraph's SQLite checkpointer (one thread per task and strategy)
results.jsonl       one line per finished task and strategy
trace.jsonl         every node event
jobs.jsonl          deferred evaluation: the candidates every paused graph waits for
summary.json        the per-level table of the results so far
sweep.lock          held (flock) by the one process sweeping the run
"""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver


@dataclass(frozen=True)
class RunDir:
    path: Path

    @property
    def settings_file(self) -> Path:
        return self.path / "run.json"

    @property
    def results(self) -> Path:
        return self.path / "results.jsonl"

    @property
    def trace(self) -> Path:
        return self.path / "trace.jsonl"

    @property
    def jobs(self) -> Path:
        return self.path / "jobs.jsonl"

    @property
    def summary(self) -> Path:
        return self.path / "summary.json"

    @property
    def checkpoints(self) -> Path:
        return self.path / "checkpoints.sqlite"

    def save_settings(self, settings: dict[str, Any]) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        tmp = self.settings_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(settings, indent=1), encoding="utf-8")
        tmp.replace(self.settings_file)

    def load_settings(self) -> dict[str, Any]:
        if not self.settings_file.is_file():
            raise FileNotFoundError(f"{self.path} is not a run directory (no run.json)")
        return json.loads(self.settings_file.read_text(encoding="utf-8"))

    @contextmanager
    def checkpointer(self) -> Iterator[SqliteSaver]:
        """The run's SQLite checkpointer; WAL mode so a killed process leaves a consistent database."""
        self.path.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.checkpoints, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        try:
            saver = SqliteSaver(conn)
            saver.setup()
            yield saver
        finally:
            conn.close()

    @contextmanager
    def sweeping(self) -> Iterator[None]:
        """Exclusive right to sweep the run: two processes continuing the same graphs would both run (and
        bill) their next nodes. The lock is the kernel's, so a killed process never leaves it behind."""
        self.path.mkdir(parents=True, exist_ok=True)
        with open(self.path / "sweep.lock", "a+", encoding="utf-8") as f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                f.seek(0)
                raise RunBusyError(
                    f"{self.path} is being swept by another process (pid {f.read().strip() or '?'}); "
                    "wait for it to end (run.py --resume DIR --write-jobs reads its paused graphs meanwhile)"
                ) from None
            f.truncate(0)
            f.write(str(os.getpid()))
            f.flush()
            yield


class RunBusyError(RuntimeError):
    """Another process holds the run's sweep lock."""


def new_run_path(root: Path) -> Path:
    """runs/<UTC time>, made unique if two runs start in the same second."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    path = root / stamp
    suffix = 1
    while path.exists():
        suffix += 1
        path = root / f"{stamp}-{suffix}"
    return path
