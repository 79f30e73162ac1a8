"""The reference's op-level time breakdown, for the profiling-guided prompt; cached per problem + GPU."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from evaluator import device, sandbox
from evaluator.config import EvalConfig
from evaluator.problem import Problem


def profile_problem(problem: Problem, config: EvalConfig | None = None) -> dict[str, Any]:
    """{"rows": [{op, us, share, calls, shapes, kernels}], "text": table for a prompt, "device", "cached"}."""
    config = config or EvalConfig()
    gpu = device.gpu_name(config.backend)
    safe = "".join(c if c.isalnum() else "_" for c in gpu)
    cache = Path(config.cache_dir) / "profiles" / f"{problem.key}_{safe}.json"
    if cache.exists():
        with contextlib.suppress(json.JSONDecodeError):
            return {**json.loads(cache.read_text()), "cached": True}
    env = {"CUDA_VISIBLE_DEVICES": "0" if config.backend == "cuda" else ""}
    run = sandbox.run_worker(
        "profile",
        {"problem": problem.to_dict(), "config": config.to_dict()},
        config.run_timeout_s,
        env,
        config.log_tail_chars,
    )
    r = run.result or {}
    if "rows" not in r:
        return {
            "rows": [],
            "text": "",
            "device": gpu,
            "cached": False,
            "error": "timeout" if run.timed_out else run.log_tail[-1500:],
        }
    out = {
        "rows": r["rows"],
        "text": r["text"],
        "device": r.get("device", gpu),
        "torch": r.get("torch"),
        "problem": problem.key,
        "backend": config.backend,
    }
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(out))
    return {**out, "cached": False}
