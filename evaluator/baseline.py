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
    per_torch = _read(path).get(gpu) or {}
    if torch_version is None:
        import torch

        torch_version = torch.__version__
    table = per_torch.get(torch_version)
    if table is None and len(per_torch) == 1:
        table = next(iter(per_torch.values()))
    return (table or {}).get(problem.key)


def measure(
    problems: list[Problem],
    config: EvalConfig,
    budget_s: float,
    known: dict[str, dict[str, Any]] | None = None,
) -> dict[str, dict[str, Any]]:
    """Time references in one fresh worker: eager for all, then torch.compile until `budget_s` is spent.

    `known` (entries already recorded for this GPU and torch) makes it resumable: an eager time on record
    is not measured again, a problem with both times on record is left out, and the fields not measured
    are absent from the returned entry, so `record` keeps the recorded ones.
    """
    known = known or {}
    problems = [p for p in problems if not _complete(known.get(p.key))]
    if not problems:
        return {"device": None, "torch": None, "entries": {}}
    env = {
        "CUDA_VISIBLE_DEVICES": "0" if config.backend == "cuda" else "",
        "TORCHINDUCTOR_CACHE_DIR": str(Path(config.cache_dir) / "inductor"),
    }
    payload = {
        "problems": [
            {**p.to_dict(), "key": p.key, "skip_eager": bool((known.get(p.key) or {}).get("ms_eager"))}
            for p in problems
        ],
        "config": config.to_dict(),
        "budget_s": budget_s,
    }
    run = sandbox.run_worker("baseline", payload, budget_s + config.run_timeout_s, env, config.log_tail_chars)
    r = run.result or {}
    out = {}
    for key, e in (r.get("entries") or {}).items():
        eager, compiled = e.get("eager") or {}, e.get("compiled") or {}
        entry = {
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
        if e.get("eager_skipped"):
            entry = {k: v for k, v in entry.items() if k not in ("ms_eager", "trials")}
        out[key] = entry
    if run.timed_out or run.returncode != 0:
        for entry in out.values():
            entry.setdefault("worker_tail", run.log_tail[-400:])
    return {"device": r.get("device"), "torch": r.get("torch"), "entries": out}


def _complete(entry: dict[str, Any] | None) -> bool:
    return bool(entry and entry.get("ms_eager") and entry.get("ms_compile"))


def recorded(path: str, gpu: str, torch_version: str) -> dict[str, dict[str, Any]]:
    """The entries on record for this GPU and torch version (empty when none)."""
    return dict((_read(path).get(gpu) or {}).get(torch_version) or {})


def _read(path: str) -> dict[str, Any]:
    """The whole baseline file; empty when it is missing or unreadable."""
    try:
        return json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError):
        return {}


def record(path: str, entries: dict[str, dict[str, Any]], gpu: str, torch_version: str) -> None:
    """Merge measured entries into the baseline file, keyed by GPU name and torch version, field by field."""
    p = Path(path)
    data = json.loads(p.read_text()) if p.exists() else {}
    table = data.setdefault(gpu, {}).setdefault(torch_version, {})
    for key, entry in entries.items():
        table.setdefault(key, {}).update(entry)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
