"""The strict trials beyond KernelBench's five: inputs that tell a shortcut (signed, refilled buffers), and
whether the candidate's own kernels do the work (the profile, skipping them, copies).

Run inside the run worker (evaluator.phase_run), after the candidate's outputs matched the reference's.
"""

from __future__ import annotations

import time
from typing import Any

import torch

from evaluator import buildcache, copycheck, harness, numerics, profiling
from evaluator.config import EvalConfig


def constant(ref_outputs: list[list[torch.Tensor]]) -> bool:
    first = ref_outputs[0]
    return len(ref_outputs) > 1 and all(
        len(o) == len(first) and all(torch.equal(a, b) for a, b in zip(o, first, strict=True))
        for o in ref_outputs[1:]
    )


def signed_trial(
    config: EvalConfig,
    call_ref: Any,
    call_cand: Any,
    gen: Any,
    dev: torch.device,
    derived: numerics.Derived | None = None,
) -> dict:
    """Inputs in [-1, 1): judged by the tolerance derived on them (evaluator.numerics), else atol/rtol."""
    seed = config.seed + numerics.SIGNED_SEED_OFFSET
    ref_out = call_ref(harness.signed(gen(seed)))
    if any(
        isinstance(t, torch.Tensor) and t.is_floating_point() and not bool(torch.isfinite(t).all())
        for t in harness.flatten(ref_out)
    ):
        return {"skipped": "reference is not finite on signed inputs"}
    inputs = harness.signed(gen(seed))
    out = call_cand(inputs)
    harness.sync(dev)
    res = numerics.strict_compare(out, ref_out, derived or numerics.Derived(), config, fallback="atol_rtol")
    res["mutated_inputs"] = not harness.inputs_equal(inputs, harness.signed(gen(seed)))
    return res


def pointer_trial(
    config: EvalConfig, call_ref: Any, call_cand: Any, gen: Any, dev: torch.device, seed_offset: int = 0
) -> dict:
    """Call the candidate on buffers, refill them in place with new values, call again: an output cached
    by data pointer comes back stale."""
    buffers = gen(config.seed + 2002 + seed_offset)
    call_cand(buffers)
    fresh_seed = config.seed + 3003 + seed_offset
    harness.refill_(buffers, gen(fresh_seed))
    out = call_cand(buffers)
    harness.sync(dev)
    return harness.compare(out, call_ref(gen(fresh_seed)), config.atol, config.rtol)


def skip_trial(
    config: EvalConfig, recorder: buildcache.BuildRecorder, call_cand: Any, gen: Any, dev: torch.device
) -> dict[str, Any]:
    """Run forward on inputs it got right, once as it is and once with every call into the candidate's
    extensions skipped (each returns a NaN-filled stand-in of its usual result and writes nothing). An
    output that comes back the same never needed the custom kernels: a decoy kernel beside PyTorch doing
    the work. Cheap (two calls) and sound whatever the kernels are named; a failure while skipping means
    the output does depend on them."""
    inputs_seed = config.seed + 4006
    normal = call_cand(gen(inputs_seed))
    harness.sync(dev)
    recorder.skipping, before = True, recorder.skipped
    try:
        skipped = call_cand(gen(inputs_seed))
        harness.sync(dev)
    except Exception as exc:  # noqa: BLE001 - forward could not go on without its kernels' results
        return {"output_changed": True, "skipped_calls": recorder.skipped - before, "error": repr(exc)[:200]}
    finally:
        recorder.skipping = False
    changed = not harness.same_values(normal, skipped)
    return {"output_changed": changed, "skipped_calls": recorder.skipped - before}


def custom_kernel_use(
    config: EvalConfig,
    recorder: buildcache.BuildRecorder,
    call_ref: Any,
    call_cand: Any,
    gen: Any,
    dev: torch.device,
) -> dict[str, Any]:
    """Did forward run the compiled extension, what share of its time went there, and which of the
    reference's own kernels (ATen ops on the CPU) does it no longer launch?

    A share alone is no proof of work: a wrapper that calls cuBLAS and then a trivial kernel, or a decoy
    kernel beside `A @ B`, has a share too. A candidate that replaces reference work launches at least one
    of the reference's kernels fewer times; the two profiles give that for one extra reference call."""
    call_cand(gen(config.seed + 4004))  # warm-up
    harness.sync(dev)
    inputs = gen(config.seed + 4005)
    calls_before, secs_before = recorder.calls, recorder.call_seconds
    t0 = time.perf_counter()
    call_cand(inputs)
    harness.sync(dev)
    wall = time.perf_counter() - t0  # unprofiled: the host-side share of time inside the extension
    ext_calls = recorder.calls - calls_before
    host_share = (recorder.call_seconds - secs_before) / wall if wall > 0 else None
    prof = profiling.profile_forward(lambda: call_cand(inputs), dev)
    call_ref(inputs)  # warm-up, as the candidate had
    ref_units = profiling.work_units(profiling.profile_forward(lambda: call_ref(inputs), dev), dev)
    cand_units = profiling.work_units(prof, dev)
    info: dict[str, Any] = {
        "ext_calls": ext_calls,
        "kernel_names": sorted(recorder.kernel_names),
        "reference_units": len(ref_units),
        "replaced": sorted(name for name, n in ref_units.items() if cand_units[name] < n)[:8],
    }
    if dev.type == "cuda":
        # Only kernels launched outside every ATen op count as the candidate's (profiling.kernel_launches).
        launches = profiling.kernel_launches(prof)
        names = recorder.kernel_names
        spent = profiling.custom_kernel_time(launches, names)
        total, custom_us = spent["total_us"], spent["custom_us"]
        info["kernels"] = sorted(((name, us) for name, us, _ in launches), key=lambda k: -k[1])[:8]
        info["library_named_like_custom"] = spent["library_named_like_custom"]
        info["share"] = round(custom_us / total, 4) if total > 0 else None
        info["launched"] = ext_calls > 0 and (custom_us > 0 or not names)
    else:
        info["share"] = round(min(1.0, host_share), 4) if host_share is not None else None
        info["launched"] = ext_calls > 0
    return info


def copy_trial(
    config: EvalConfig,
    recorder: buildcache.BuildRecorder,
    call_ref: Any,
    call_cand: Any,
    gen: Any,
    strict: dict[str, Any],
) -> list[str]:
    """Custom kernels that only copy or cast their inputs are not work (evaluator.copycheck)."""
    seed = config.seed + 6006
    strict["copy_trial"] = copycheck.copy_trial(
        recorder, call_ref, call_cand, lambda: harness.signed(gen(seed))
    )
    return ["custom_kernels_only_copy"] if strict["copy_trial"]["only_copies"] else []
