"""What a batch learns about each problem from one run and hands to the problem's later runs.

The strict numerics' tolerances (evaluator.numerics) depend on the reference, its seeded inputs and the
configuration only, and take float64 runs of the reference (seconds for a convolution); the reference's
torch.compile time is an inductor compile (10-60 s). Each is made once per problem and batch instead of
once per candidate, and learnt only from a run that finished with its judge intact (evaluator.integrity).
"""

from __future__ import annotations

import hashlib
import json
import threading
from typing import Any

from evaluator.config import EvalConfig


class ProblemFacts:
    """Per problem and configuration: the tolerances and the compiled reference's time, once learnt."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tolerances: dict[str, dict[str, Any]] = {}
        self._compiled: dict[str, dict[str, Any]] = {}

    @staticmethod
    def _key(problem: str, config: EvalConfig) -> str:
        return hashlib.sha256(f"{problem}\0{json.dumps(config.to_dict())}".encode()).hexdigest()

    def tolerances(self, problem: str, config: EvalConfig) -> dict[str, Any] | None:
        with self._lock:
            return self._tolerances.get(self._key(problem, config))

    def compiled(self, problem: str, config: EvalConfig) -> dict[str, Any] | None:
        with self._lock:
            return self._compiled.get(self._key(problem, config))

    def learn(self, problem: str, config: EvalConfig, result: dict[str, Any]) -> None:
        """From a run worker's result: what it derived and measured, if it finished with its judge intact."""
        if result.get("stage") != "done" or "judge_tampered" in (result.get("strict_failures") or []):
            return
        key = self._key(problem, config)
        compiled = (result.get("timing") or {}).get("reference_compile") or {}
        with self._lock:
            if result.get("tolerances"):
                self._tolerances.setdefault(key, result["tolerances"])
            if compiled.get("source") == "same_process" and (compiled.get("ms") or compiled.get("error")):
                self._compiled.setdefault(key, compiled)


def interleaved(problems: list[str]) -> list[int]:
    """Job indices (one problem key per job), one job of each problem in turn, first jobs first in their
    order: a problem's later candidates then start after its first has finished, and reuse what it learnt."""
    by_problem: dict[str, list[int]] = {}
    for i, problem in enumerate(problems):
        by_problem.setdefault(problem, []).append(i)
    queues = list(by_problem.values())
    order: list[int] = []
    for depth in range(max((len(q) for q in queues), default=0)):
        order += [q[depth] for q in queues if depth < len(q)]
    return order
