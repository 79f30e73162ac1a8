"""torch.compile of the reference in a run worker: compiled by one call (its time and any error kept apart
from the candidate's), and timed, or taken from the baseline or an earlier run of the problem."""

from __future__ import annotations

import time
from typing import Any

import torch

from evaluator import harness
from evaluator.config import EvalConfig
from evaluator.runtime import error_info
from evaluator.timing import Timer


def compiled_reference_ms(
    spec: dict[str, Any],
    config: EvalConfig,
    timer: Timer,
    make: Any,
    ref_model: torch.nn.Module,
    dev: torch.device,
) -> dict[str, Any] | None:
    """torch.compile's time of the reference as `config.reference_compile` asks for it, after the
    candidate's trials (the interleaved mode times it in them instead: evaluator.phase_run)."""
    if config.reference_compile == "off":
        return None
    if config.reference_compile == "baseline" and spec.get("baseline_entry"):
        return {"ms": spec["baseline_entry"].get("ms_compile"), "source": "baseline"}
    if spec.get("reference_compile_known"):  # measured by an earlier run of this problem in the batch
        return {**spec["reference_compile_known"], "source": "earlier_run"}
    call, info = compile_reference(ref_model, make, dev)
    if call is None:
        return {"ms": None, "source": "same_process", **info}
    measured = timer.measure(call, make, config.warmup, config.timing_trials, trusted=True)
    return {**measured, "source": "same_process", **info}


def compile_reference(
    ref_model: torch.nn.Module, make: Any, dev: torch.device
) -> tuple[Any | None, dict[str, Any]]:
    """torch.compile of the reference, compiled by one call: the function to time (None where inductor
    cannot compile it) and what to report of it (how long the compile took, or the error)."""
    compiled = torch.compile(ref_model)

    def call(args: list[Any]) -> Any:
        with torch.no_grad():
            return compiled(*args)

    t0 = time.perf_counter()
    try:
        call(make(0))
        harness.sync(dev)
    except Exception as exc:  # noqa: BLE001 - a reference inductor cannot compile is a fact to report
        return None, {"error": error_info(exc, 500)["message"]}
    return call, {"compile_seconds": round(time.perf_counter() - t0, 2)}
