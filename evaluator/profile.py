"""The reference's op-level time breakdown, for the profiling-guided prompt; cached per problem + GPU."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from evaluator import device, sandbox
from evaluator.config import EvalConfig
from evaluator.problem import Problem


def profile_path(store: Path, problem: Problem, gpu: str) -> Path:
    """Where the profile of `problem` on `gpu` lives in a profile store (a plain directory)."""
    safe = "".join(c if c.isalnum() else "_" for c in gpu)
    return store / f"{problem.key}_{safe}.json"


def stored_profile(store: Path, problem: Problem, gpu: str) -> dict[str, Any] | None:
    """A profile made earlier (here or on another host: deferred runs read the GPU host's), or None."""
    return _read(profile_path(store, problem, gpu))


def find_profile(store: Path, problem: Problem) -> dict[str, Any] | None:
    """The one profile of `problem` in a store made on some GPU host (this host's GPU preferred), or None.

    A store holding the problem for several GPUs, none of them this host's, is ambiguous: ValueError.
    """
    here = profile_path(store, problem, device.gpu_name("cuda"))
    candidates = [here] if here.exists() else sorted(store.glob(f"{problem.key}_*.json"))
    if len(candidates) > 1:
        raise ValueError(f"{store} holds {problem.key} for several GPUs: {[p.name for p in candidates]}")
    return _read(candidates[0]) if candidates else None


def _read(path: Path) -> dict[str, Any] | None:
    with contextlib.suppress(OSError, json.JSONDecodeError):
        return {**json.loads(path.read_text()), "cached": True}
    return None


def profile_problem(
    problem: Problem, config: EvalConfig | None = None, store: Path | None = None
) -> dict[str, Any]:
    """{"rows": [{op, us, share, calls, shapes, kernels}], "text": table for a prompt, "device", "cached"}.

    Kept in `store` (default: the cache directory's profiles/), one file per problem and GPU.
    """
    config = config or EvalConfig()
    gpu = device.gpu_name(config.backend)
    store = store or Path(config.cache_dir) / "profiles"
    cache = profile_path(store, problem, gpu)
    found = stored_profile(store, problem, gpu)
    if found is not None:
        return found
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
