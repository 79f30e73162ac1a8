"""Select: keep the best candidate (strictly correct first, then KernelBench-correct, then speedup)."""

from __future__ import annotations

import time
from typing import Any

from graph.state import State, event

# How far a candidate got through the evaluator's pipeline: a failure later in it is closer to working.
STAGE = {
    "no_code": 0,
    "static_reject": 1,
    "compile_error": 2,
    "timeout": 3,
    "runtime_error": 3,
    "wrong_output": 4,
    "correct": 5,
}


def rank(candidate: dict[str, Any]) -> tuple[bool, bool, float, int, bool]:
    """Sort key, larger is better: correct (strict, then KernelBench), speedup over eager, stage, compiled."""
    verdict = candidate.get("verdict") or {}
    strict, loose = bool(verdict.get("correct_strict")), bool(verdict.get("correct_kernelbench"))
    speedup = float(verdict.get("speedup_eager") or 0.0) if (strict or loose) else 0.0
    return strict, loose, speedup, STAGE.get(str(verdict.get("verdict")), 0), bool(verdict.get("compiled"))


def best_of(candidates: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The best candidate; ties go to the earliest, so a later equal sample never displaces a found one."""
    best: dict[str, Any] | None = None
    for candidate in candidates:
        if best is None or rank(candidate) > rank(best):
            best = candidate
    return best


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
