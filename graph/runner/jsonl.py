"""Append-only JSON-lines files that survive a kill -9: every line is flushed and fsynced on write.

A process killed in the middle of a write leaves a partial last line; opening the file again cuts it off
so the next record does not fuse with it, and readers skip such a line.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from evaluator.jobs import cut_torn_line


class JsonlLog:
    """One append-only JSON-lines file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        cut_torn_line(path)
        self._handle = open(path, "a", encoding="utf-8")

    def write(self, record: dict[str, Any]) -> None:
        self._handle.write(json.dumps(record, default=str) + "\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        self._handle.close()


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Every complete record of a JSON-lines file; a torn last line (from a kill) is skipped."""
    if not path.is_file():
        return []
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return records
