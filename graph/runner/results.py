"""results.jsonl: one line per task and strategy, written once the graph has finished.

The line records the best candidate's verdict summary, every candidate as a record (id, round, sample and
its verdict summary, `evaluator.verdict.summary`), what the run was (strategy, context, model) and what it
cost. A key already present is never written again, so a resumed sweep neither loses nor repeats a result.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from evaluator.verdict import summary
from graph.runner.jsonl import JsonlLog, read_jsonl
from graph.runner.suite import task_key


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
    record.update(summary(verdict))
    record["verdict"] = verdict.get("verdict", "no_candidate")
    record.update(
        best_id=(best or {}).get("id"),
        best_code=(best or {}).get("code"),
        candidates=[candidate_record(c) for c in candidates],
        rounds=values.get("round"),
        prompt_tokens=sum(int(e.get("prompt_tokens") or 0) for e in events),
        completion_tokens=sum(int(e.get("completion_tokens") or 0) for e in events),
        node_seconds=round(sum(float(e.get("seconds") or 0.0) for e in events), 3),
        finished_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    )
    record.update(run_info)
    return record


def candidate_record(candidate: dict[str, Any]) -> dict[str, Any]:
    """What a results line keeps of one candidate: where it came from and its verdict summary."""
    return {k: candidate.get(k) for k in ("id", "round", "sample")} | summary(candidate.get("verdict"))
