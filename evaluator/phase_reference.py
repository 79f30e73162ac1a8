"""Worker phases `profile` and `baseline`: the reference alone (trusted code)."""

from __future__ import annotations

import time
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from evaluator import harness, profiling
from evaluator.config import EvalConfig
from evaluator.reference_compile import compiled_reference_ms
from evaluator.runtime import (
    Result,
    construct,
    device_name,
    error_info,
    load_module,
    select_device,
    set_precision,
)
from evaluator.timing import Timer


def run_profile(spec: dict[str, Any], config: EvalConfig, result: Result) -> None:
    set_precision(config)
    dev = select_device(config)
    scratch = Path(spec["scratch"])
    ref_mod = load_module("kg_reference", spec["problem"]["source"], scratch)
    torch.manual_seed(config.seed)
    with torch.device(dev):
        init = list(ref_mod.get_init_inputs())
    model = construct(ref_mod.Model, init, config.seed, dev)
    inputs = harness.make_inputs(ref_mod.get_inputs, config.seed, dev)
    with torch.no_grad():
        for _ in range(max(1, config.warmup)):
            model(*inputs)
        harness.sync(dev)
        prof = profiling.profile_forward(lambda: model(*inputs), dev)
    rows = profiling.op_table(prof, dev)
    result.update(
        rows=rows, text=profiling.render_table(rows), device=device_name(dev), torch=torch.__version__
    )


def run_baseline(spec: dict[str, Any], config: EvalConfig, result: Result) -> None:
    """References alone (trusted: one process for all), eager first, then torch.compile until the deadline.

    The same timer candidates get. Entries are flushed after each measurement, so a kill keeps them.
    """
    set_precision(config)
    dev = select_device(config)
    scratch = Path(spec["scratch"])
    deadline = time.perf_counter() + float(spec.get("budget_s", 1e9))
    entries: dict[str, dict[str, Any]] = {}
    result.update(entries=entries, device=device_name(dev), torch=torch.__version__)
    loaded = []
    for i, prob in enumerate(spec["problems"]):
        try:
            mod = load_module(f"kg_reference_{i}", prob["source"], scratch)
        except Exception as exc:  # noqa: BLE001 - a broken problem is an entry with the error
            entries[prob["key"]] = {"error": error_info(exc, 500)["message"]}
            continue
        loaded.append((prob, mod))
    for prob, mod in loaded:
        entries[prob["key"]] = {
            "name": prob["name"],
            "level": prob["level"],
            "problem_id": prob["problem_id"],
        }
        if prob.get("skip_eager"):
            entries[prob["key"]]["eager_skipped"] = True
            continue
        try:
            model, make, call = _reference_runner(mod, config, dev)
            timer = Timer(dev, config.l2_flush_bytes)
            entries[prob["key"]]["eager"] = timer.measure(
                call, make, config.warmup, config.timing_trials, trusted=True
            )
        except Exception as exc:  # noqa: BLE001
            entries[prob["key"]]["error"] = error_info(exc, 500)["message"]
        finally:
            model = make = call = None
            if dev.type == "cuda":
                torch.cuda.empty_cache()
        result.update(entries=entries)
    if config.reference_compile == "off":
        return
    for prob, mod in loaded:
        entry = entries[prob["key"]]
        if "eager" not in entry and not entry.get("eager_skipped"):
            continue
        if time.perf_counter() > deadline:
            entry["compiled"] = {"ms": None, "skipped": "deadline"}
            continue
        model, make, _ = _reference_runner(mod, config, dev)
        timer = Timer(dev, config.l2_flush_bytes)
        entry["compiled"] = compiled_reference_ms(
            {}, config.replace(reference_compile="same_process"), timer, make, model, dev
        )
        model = make = None
        torch._dynamo.reset()
        if dev.type == "cuda":
            torch.cuda.empty_cache()
        result.update(entries=entries)


def _reference_runner(mod: ModuleType, config: EvalConfig, dev: torch.device) -> tuple[Any, Any, Any]:
    torch.manual_seed(config.seed)
    with torch.device(dev):
        init = list(mod.get_init_inputs())
    model = construct(mod.Model, init, config.seed, dev)

    def make(i: int) -> list[Any]:
        return harness.make_inputs(mod.get_inputs, config.seed + 5000 + i, dev)

    def call(args: list[Any]) -> Any:
        with torch.no_grad():
            return model(*args)

    return model, make, call
