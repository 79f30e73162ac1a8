"""Select: keep the best candidate (strictly correct first, then KernelBench-correct, then speedup)."""

from __future__ import annotations

import time
from typing import Any

from evaluator.verdict import best
from evaluator.verdict import rank as verdict_rank
from nodes.state import State, event


def rank(candidate: dict[str, Any]) -> tuple[bool, bool, float, int, bool]:
    """A candidate's sort key, larger is better: the rank of its verdict (evaluator.verdict.rank)."""
    return verdict_rank(candidate.get("verdict"))


def best_of(candidates: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The best candidate; ties go to the earliest, so a later equal sample never displaces a found one."""
    return best(candidates, lambda c: c.get("verdict"))


def select(state: State) -> dict[str, Any]:
    """Pick the overall best of every evaluated candidate."""
    started = time.perf_counter()
    candidates = state.get("candidates") or []
    best = best_of(candidates)
    verdict = (best or {}).get("verdict") or {}
    outputs = {
        "best": best and best["id"],
        "verdict": verdict.get("verdict"),
        "correct_strict": verdict.get("correct_strict"),
        "speedup_eager": verdict.get("speedup_eager"),
    }
    return {
        "best": best,
        "events": [
            event(
                "select",
                state.get("round", 0),
                seconds=time.perf_counter() - started,
                inputs={"candidates": len(candidates)},
                outputs=outputs,
            )
        ],
    }
