"""results.jsonl: one line per task and strategy, written once the graph has finished.

The line records the best candidate's verdict, what the run was (strategy, context, model) and what it
cost. A key already present is never written again, so a resumed sweep neither loses nor repeats a result.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from graph.runner.jsonl import JsonlLog, read_jsonl
from graph.runner.suite import task_key

VERDICT_FIELDS = (
    "verdict",
    "correct_strict",
    "correct_kernelbench",
    "compiled",
    "speedup_eager",
    "speedup_compile",
    "custom_kernel_share",
)


def result_key(record: dict[str, Any]) -> tuple[str, str]:
    return record["task"], record["strategy"]


class ResultsFile:
    """The results of one run directory, deduplicated by (task, strategy)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.records: dict[tuple[str, str], dict[str, Any]] = {}
        for record in read_jsonl(path):
            self.records.setdefault(result_key(record), record)
        self._log = JsonlLog(path)

    def has(self, task: dict[str, Any], strategy: str) -> bool:
        return (task_key(task), strategy) in self.records

    def add(self, record: dict[str, Any]) -> bool:
        """Write `record` unless its key is already there; True when written."""
        key = result_key(record)
        if key in self.records:
            return False
        self._log.write(record)
        self.records[key] = record
        return True

    def close(self) -> None:
        self._log.close()


def build_result(
    task: dict[str, Any], strategy: str, values: dict[str, Any], run_info: dict[str, Any]
) -> dict[str, Any]:
    """The results line for a finished graph, from its final state values."""
    best = values.get("best") or None
    verdict = (best or {}).get("verdict") or {}
    candidates = values.get("candidates") or []
    events = values.get("events") or []
    record: dict[str, Any] = {
        "task": task_key(task),
        "name": task["name"],
        "level": task["level"],
        "problem_id": task["problem_id"],
        "strategy": strategy,
    }
    record.update({field: verdict.get(field) for field in VERDICT_FIELDS})
    record["verdict"] = verdict.get("verdict", "no_candidate")
    record.update(
        best_id=(best or {}).get("id"),
        best_code=(best or {}).get("code"),
        candidates=len(candidates),
        candidate_verdicts=[(c.get("verdict") or {}).get("verdict") for c in candidates],
        candidate_speedups=[(c.get("verdict") or {}).get("speedup_eager") for c in candidates],
        candidate_kernelbench=[bool((c.get("verdict") or {}).get("correct_kernelbench")) for c in candidates],
        candidate_custom_shares=[(c.get("verdict") or {}).get("custom_kernel_share") for c in candidates],
        rounds=values.get("round"),
        prompt_tokens=sum(int(e.get("prompt_tokens") or 0) for e in events),
        completion_tokens=sum(int(e.get("completion_tokens") or 0) for e in events),
        node_seconds=round(sum(float(e.get("seconds") or 0.0) for e in events), 3),
        finished_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    )
    record.update(run_info)
    return record
