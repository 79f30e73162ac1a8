"""Profile: the reference's op-level time breakdown, for prompts that say where the time goes."""

from __future__ import annotations

import time
from typing import Any

from langgraph.runtime import Runtime

from nodes.context import Context, settings
from nodes.state import State, event
from tools.profiler import profile_reference

PROFILE_CHARS = 2500


def profile(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Profile once per run; a failure is recorded and the prompt simply goes without a profile."""
    ctx = settings(runtime)
    started = time.perf_counter()
    task = state["task"]
    try:
        result = dict(profile_reference(dict(task), ctx.backend, ctx.profiles))
        result["text"] = str(result.get("text") or "")[:PROFILE_CHARS]
    except Exception as exc:  # noqa: BLE001 - any profiler failure only costs the prompt its table
        result = {"text": "", "error": f"{type(exc).__name__}: {exc}"[:500]}
    trace = event(
        "profile",
        state.get("round", 0),
        seconds=time.perf_counter() - started,
        inputs={"task": task["name"], "backend": ctx.backend, "store": ctx.profiles},
        outputs={"chars": len(result["text"]), "error": result.get("error")},
    )
    return {"profile": result, "events": [trace]}
