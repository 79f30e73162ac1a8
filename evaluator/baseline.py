"""Reference timings (eager and torch.compile) per GPU and torch version: measure, store, look up.

File layout: {"<gpu name>": {"<torch version>": {"<problem key>": {"ms_eager", "ms_compile", ...}}}}.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evaluator import sandbox
from evaluator.config import EvalConfig
from evaluator.problem import Problem


def lookup(path: str, gpu: str, problem: Problem, torch_version: str | None = None) -> dict[str, Any] | None:
    """The entry for this problem on this GPU (for this torch, or the only torch recorded)."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError):
        return None
    per_torch = data.get(gpu) or {}
    if torch_version is None:
        import torch

        torch_version = torch.__version__
    table = per_torch.get(torch_version)
    if table is None and len(per_torch) == 1:
        table = next(iter(per_torch.values()))
    return (table or {}).get(problem.key)


def measure(problems: list[Problem], config: EvalConfig, budget_s: float) -> dict[str, dict[str, Any]]:
    """Time references in one fresh worker: eager for all, then torch.compile until `budget_s` is spent."""
    env = {
        "CUDA_VISIBLE_DEVICES": "0" if config.backend == "cuda" else "",
        "TORCHINDUCTOR_CACHE_DIR": str(Path(config.cache_dir) / "inductor"),
    }
    payload = {
        "problems": [{**p.to_dict(), "key": p.key} for p in problems],
        "config": config.to_dict(),
        "budget_s": budget_s,
    }
    run = sandbox.run_worker("baseline", payload, budget_s + config.run_timeout_s, env, config.log_tail_chars)
    r = run.result or {}
    out = {}
    for key, e in (r.get("entries") or {}).items():
        eager, compiled = e.get("eager") or {}, e.get("compiled") or {}
        out[key] = {
            "name": e.get("name"),
            "level": e.get("level"),
            "problem_id": e.get("problem_id"),
            "ms_eager": eager.get("ms"),
            "ms_compile": compiled.get("ms"),
            "compile_seconds": compiled.get("compile_seconds"),
            "compile_note": compiled.get("error") or compiled.get("skipped"),
            "trials": eager.get("trials"),
            "error": e.get("error"),
        }
    if run.timed_out or run.returncode != 0:
        for entry in out.values():
            entry.setdefault("worker_tail", run.log_tail[-400:])
    return {"device": r.get("device"), "torch": r.get("torch"), "entries": out}


def record(path: str, entries: dict[str, dict[str, Any]], gpu: str, torch_version: str) -> None:
    """Merge measured entries into the baseline file, keyed by GPU name and torch version."""
    p = Path(path)
    data = json.loads(p.read_text()) if p.exists() else {}
    data.setdefault(gpu, {}).setdefault(torch_version, {}).update(entries)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
