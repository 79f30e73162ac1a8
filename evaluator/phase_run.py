"""Worker phase `run`: correctness (KernelBench-compatible, then strict), custom-kernel use, timing."""

from __future__ import annotations

import time
from typing import Any

import torch

from evaluator import buildcache, guard, harness, integrity, numerics, profiling, strict_trials
from evaluator.config import EvalConfig
from evaluator.reference_compile import compile_reference, compiled_reference_ms
from evaluator.regions.judge import judge_region
from evaluator.runtime import (
    Result,
    StageLimit,
    acquire_device,
    construct,
    device_alone,
    device_quiet,
    error_info,
    load_module,
    select_device,
    set_precision,
    setup,
)
from evaluator.timing import Timer


def run_candidate(spec: dict[str, Any], config: EvalConfig, result: Result) -> None:
    recorder, scratch = setup(spec, config)
    set_precision(config)
    ref_mod = load_module("kg_reference", spec["problem"]["source"], scratch)
    result.update(stage="load")
    # Before any candidate code: what judging depends on, checked at every change of stage from here on.
    watch = integrity.watch_stages(result, integrity.JudgeSnapshot([ref_mod]))
    # Everything up to the device share (the CUDA context, the profiler's start-up, building both models,
    # the reference's first call, loading the candidate) overlaps other workers' GPU work; from there on
    # this process has a share of the device (evaluator.device_share). A run judged again for memory takes
    # the device first.
    dev = select_device(config)
    profiling.warm_up(dev, profiler=config.strict)
    if spec.get("alone"):
        acquire_device(spec, scratch)

    def init_inputs() -> list[Any]:
        torch.manual_seed(config.seed)
        with torch.device(dev):
            return list(ref_mod.get_init_inputs())

    def call_ref(args: list[Any]) -> Any:
        with torch.no_grad():
            return ref(*args)

    def gen(seed: int) -> list[Any]:
        return harness.make_inputs(ref_mod.get_inputs, seed, dev)

    # Reference work only, before any candidate code has run here: nothing can keep it from ending.
    result.update(stage="prepare")  # "load" ends here: the CUDA context and the profiler's start-up
    with device_quiet(spec):  # never beside a worker that measures
        ref = construct(ref_mod.Model, init_inputs(), config.seed, dev)
        _warm_reference(call_ref, gen, dev, config.seed)
    result.update(stage="load_candidate")
    guard.Guard.active = True
    try:
        cand_mod = load_module("kg_candidate", spec["candidate"], scratch)
        cand_cls = cand_mod.ModelNew
    except BaseException as exc:  # noqa: BLE001
        guard.Guard.active = False
        return _fail(result, recorder, "load", exc)
    guard.Guard.active = False
    result.update(stage="construct")
    # No stage limit while the candidate is built: its __init__ may still compile an extension.
    guard.Guard.active = True
    try:
        cand = construct(cand_cls, init_inputs(), config.seed, dev)
    except BaseException as exc:  # noqa: BLE001
        return _fail(result, recorder, "init", exc)
    finally:
        guard.Guard.active = False
    result.update(builds=recorder.builds)
    if not spec.get("alone"):
        acquire_device(spec, scratch)
    result.update(stage="reference")  # "construct" ends here: it includes the wait for the device
    limit = StageLimit(scratch, config, _seconds_per_call(call_ref, gen, dev, config.seed))
    result.update(reference_seconds_per_call=limit.seconds_per_call)

    def call_cand(args: list[Any]) -> Any:
        guard.Guard.active = True
        try:
            with torch.no_grad():
                return cand(*args)
        finally:
            guard.Guard.active = False

    try:
        if spec.get("regions"):
            result.update(stage="regions")
            limit.calls(2 * len(spec["regions"]), "regions")
            result.update(
                regions=[
                    judge_region(marker, cand_mod, config.seed, config, dev) for marker in spec["regions"]
                ]
            )
        _check_and_time(spec, config, result, recorder, dev, call_ref, call_cand, gen, ref, limit)
    except BaseException as exc:  # noqa: BLE001 - a crash mid-check is the candidate's runtime error
        return _fail(result, recorder, result.data.get("stage", "run"), exc)
    if config.strict:
        _late_failures(result)
        integrity.finish(result, watch)


def _fail(result: Result, recorder: buildcache.BuildRecorder, stage: str, exc: BaseException) -> None:
    verdict = "compile_error" if recorder.error is not None else "runtime_error"
    result.update(
        stage=stage,
        verdict_kernelbench=verdict,
        verdict=verdict,
        error=error_info(exc),
        build_error=recorder.error,
        builds=recorder.builds,
        sandbox_refusals=guard.Guard.refused,
    )


def _share_floor_applies(spec: dict[str, Any]) -> bool:
    """The share floor tells a program whose author left the work to torch. A region candidate's author
    wrote one kernel; the framework chose the region, and its share of the forward (a ReLU beside an MLP's
    GEMMs is ~0.3%) says how ambitious that choice was, not whether the kernel does its work. That is judged
    directly: the region check (the kernel alone gives the region's output), the skip trial (the output
    needs it) and the reference work it replaces. The share is still measured and reported."""
    return not spec.get("regions")


def _warm_reference(call_ref: Any, gen: Any, dev: torch.device, seed: int) -> None:
    """One reference call before the device share: its first call loads its kernels and creates the
    library handles (cuBLAS, cuDNN), ~0.1-0.5 s of host work a problem that no other worker needs to wait
    for. Out of memory beside the other workers, the share's first call warms it up instead."""
    try:
        call_ref(gen(seed))
        harness.sync(dev)
    except torch.OutOfMemoryError:
        torch.cuda.empty_cache()


def _seconds_per_call(call_ref: Any, gen: Any, dev: torch.device, seed: int) -> float:
    """The reference's time for one call with fresh inputs, after _warm_reference's (without it, the first
    call's start-up makes it longer: a more generous limit, never a tighter one): the unit of a stage's time
    limit (see runtime.StageLimit)."""
    t0 = time.perf_counter()
    call_ref(gen(seed))
    harness.sync(dev)
    return time.perf_counter() - t0


def _trial_seeds(config: EvalConfig) -> list[int]:
    torch.manual_seed(config.seed)  # KernelBench draws its trial seeds from the base seed
    return [int(torch.randint(0, 2**31 - 1, (1,)).item()) for _ in range(config.trials)]


def _check_and_time(
    spec: dict[str, Any],
    config: EvalConfig,
    result: Result,
    recorder: buildcache.BuildRecorder,
    dev: torch.device,
    call_ref: Any,
    call_cand: Any,
    gen: Any,
    ref_model: torch.nn.Module,
    limit: StageLimit,
) -> None:
    strict_failures: list[str] = []
    trials = []
    trial_errors: list[list[numerics.OutputError | None]] = []  # per trial, per output: for strict numerics
    ref_outputs = []
    result.update(stage="correctness")
    limit.calls(4 * config.trials, "correctness")
    for seed in _trial_seeds(config):
        ref_out = call_ref(gen(seed))
        inputs = gen(seed)
        out = call_cand(inputs)
        harness.sync(dev)
        cmp = harness.compare(out, ref_out, config.atol, config.rtol)
        cmp["seed"] = seed
        if cmp["ok"] and config.strict:
            trial_errors.append(numerics.output_errors(out, ref_out))
            if not harness.inputs_equal(inputs, gen(seed)):
                cmp["mutated_inputs"] = True
                strict_failures.append("input_mutation")
            if harness.aliases(out, inputs) and not harness.aliases(call_ref(inputs), inputs):
                cmp["aliases_input"] = True
                strict_failures.append("output_aliases_input")
            if cmp.get("ref_max_abs", 1.0) < config.tiny_output_abs:
                # atol alone would let zeros pass: judge the error against the output's own scale.
                cmp["tiny_reference"] = True
                if cmp["max_abs_err"] > config.strict_scale_rtol * cmp["ref_max_abs"]:
                    strict_failures.append("wrong_at_output_scale")
        trials.append(cmp)
        ref_outputs.append(
            [t.flatten()[:64].double().cpu() for t in harness.flatten(ref_out) if isinstance(t, torch.Tensor)]
        )
        result.update(trials=trials)
        if not cmp["ok"]:
            result.update(
                verdict_kernelbench="wrong_output",
                verdict="wrong_output",
                correct_kernelbench=False,
                evidence_mismatch=cmp,
            )
            return
        del out, ref_out, inputs
    result.update(verdict_kernelbench="correct", correct_kernelbench=True)
    strict: dict[str, Any] = {}
    if config.strict:
        if spec.get("tolerances"):
            tolerances = numerics.Tolerances.from_dict(spec["tolerances"])
        else:
            tolerances = _derive_tolerances(config, result, ref_model, call_ref, gen, dev, limit)
            result.update(tolerances=tolerances.to_dict())
        strict["numerics"] = numerics.judge(trial_errors, tolerances.standard)
        if strict["numerics"]["within_reference_numerics"] is False:
            strict_failures.append("beyond_reference_numerics")
        result.update(stage="strict")
        limit.calls(40, "strict")
        strict["constant_reference"] = strict_trials.constant(ref_outputs)
        if config.signed_trial:
            strict["signed_trial"] = strict_trials.signed_trial(
                config, call_ref, call_cand, gen, dev, tolerances.signed
            )
            if strict["signed_trial"].get("ok") is False:
                strict_failures.append("signed_inputs_mismatch")
            if strict["signed_trial"].get("mutated_inputs"):
                strict_failures.append("input_mutation")
        if config.extreme_trial:
            extreme = numerics.extreme_trial(config, call_ref, call_cand, gen, dev, tolerances.extreme)
            strict["extreme_trial"] = extreme
            if extreme.get("ok") is False:
                strict_failures.append("extreme_inputs_mismatch")
            if extreme.get("mutated_inputs"):
                strict_failures.append("input_mutation")
        strict["pointer_reuse"] = strict_trials.pointer_trial(config, call_ref, call_cand, gen, dev)
        if not strict["pointer_reuse"]["ok"]:
            strict_failures.append("stale_output_on_reused_buffers")
        strict_failures += strict_trials.copy_trial(config, recorder, call_ref, call_cand, gen, strict)
        result.update(strict=strict)
        _alone(result, limit, "profile", 40)  # the profile's shares, and all that follows: this worker alone
        custom = strict_trials.custom_kernel_use(config, recorder, call_ref, call_cand, gen, dev)
        result.update(custom=custom, stage="custom")
        if not custom["launched"]:
            strict_failures.append("no_custom_kernel_launched")
        elif (
            custom.get("share") is not None
            and custom["share"] < config.min_custom_share
            and _share_floor_applies(spec)
        ):
            strict_failures.append("custom_kernel_share_below_min")
        elif not custom["replaced"] and custom["reference_units"]:
            strict_failures.append("reference_work_still_runs")
    result.update(strict_failures=sorted(set(strict_failures)))
    if config.timing:
        _alone(result, limit, "timing", 0)
        _timing(spec, config, result, call_ref, call_cand, gen, dev, ref_model, limit)
        if config.strict:
            limit.calls(4, "after_timing")
            after = strict_trials.pointer_trial(config, call_ref, call_cand, gen, dev, seed_offset=7)
            strict["after_timing"] = after
            if not after["ok"]:
                strict_failures.append("stale_output_after_timing")
            result.update(strict=strict, strict_failures=sorted(set(strict_failures)))
    if config.strict and recorder.returned:
        # Last: the poisoned stand-ins may leave this process unfit for anything measured after them.
        result.update(stage="skip_trial")
        limit.calls(4, "skip_trial")
        strict["skip_trial"] = strict_trials.skip_trial(config, recorder, call_cand, gen, dev)
        if not strict["skip_trial"]["output_changed"]:
            strict_failures.append("output_ignores_custom_kernels")
        result.update(strict=strict, strict_failures=sorted(set(strict_failures)))
    result.update(stage="checked")


def _alone(result: Result, limit: StageLimit, stage: str, calls: int) -> None:
    """Wait until this worker has the device to itself (stage_seconds shows the wait), then start `stage`
    with a limit for `calls` reference-sized calls (0: the stage sets its own)."""
    result.update(stage="wait_device")
    device_alone(limit)
    result.update(stage=stage)
    if calls:
        limit.calls(calls, stage)


def _derive_tolerances(
    config: EvalConfig,
    result: Result,
    ref_model: torch.nn.Module,
    call_ref: Any,
    gen: Any,
    dev: torch.device,
    limit: StageLimit,
) -> numerics.Tolerances:
    """The strict numerics' float64 runs of the reference (evaluator.numerics), once KernelBench's check has
    passed. Only the reference runs, so only the run's own limit applies; out of memory beside other workers,
    the worker takes the device alone and tries once more."""
    result.update(stage="numerics")
    limit.lift("numerics")
    deriver = numerics.Deriver(
        config, ref_model, call_ref, dev, limit.seconds_per_call, on_out_of_memory=lambda: device_alone(limit)
    )
    return numerics.derive_tolerances(config, deriver, gen, _trial_seeds(config))


def _late_failures(result: Result) -> None:
    """Failures found after the strict list was last written: a timed output that differs from the
    reference's (the timer compares a sample of them), and a too-good speedup whose re-check failed."""
    timing = result.data.get("timing") or {}
    late = set()
    if (timing.get("candidate") or {}).get("output_check", {}).get("ok") is False:
        late.add("timed_output_mismatch")
    if (timing.get("reverify") or {}).get("correct") is False:
        late.add("reverify_failed")
    if late:
        result.update(strict_failures=sorted(set(result.data.get("strict_failures") or []) | late))


def _timing(
    spec: dict[str, Any],
    config: EvalConfig,
    result: Result,
    call_ref: Any,
    call_cand: Any,
    gen: Any,
    dev: torch.device,
    ref_model: torch.nn.Module,
    limit: StageLimit,
) -> None:
    result.update(stage="timing")
    timer = Timer(
        dev,
        config.l2_flush_bytes,
        config.timing_budget_s,
        config.timing_min_trials,
        config.timing_precision,
        config.timing_precision_far,
    )
    t0 = time.perf_counter()
    timer.flush.zero_()
    harness.sync(dev)
    flush_s = time.perf_counter() - t0
    seeds = [config.seed + 5000 + i for i in range(config.timing_trials + 1)]

    def make(i: int) -> list[Any]:
        return gen(seeds[i])

    def same_answer(out: Any, ref: Any) -> dict[str, Any]:  # the timed calls' outputs, sampled (strict)
        return harness.compare(out, ref, config.atol, config.rtol)

    beside: tuple[Any, dict[str, Any]] | None = None  # torch.compile's reference, timed in the same trials
    if config.reference_compile == "interleaved":
        limit.lift("reference_compile")  # inductor compiling the reference is not the candidate's time
        with integrity.trusted(result):  # torch.compile patches torch itself: the snapshot is taken again
            beside = compile_reference(ref_model, make, dev)
    # With the compiled reference the candidate leads (its trials alternate first and last, so its
    # outputs are sampled in the trials where it runs before both references); else eager leads.
    fns = [call_cand, call_ref, beside[0]] if beside and beside[0] else [call_ref, call_cand]
    # Every function's warm-up and trials, and a re-verification's as many again.
    limit.calls(2 * len(fns) * (config.warmup + config.timing_trials + 1), "timing", extra_per_call_s=flush_s)
    times = timer.measure_many(
        fns,
        make,
        config.warmup,
        config.timing_trials,
        trusted=[fn is not call_cand for fn in fns],
        check=same_answer if config.strict else None,
    )
    t_cand, t_ref = times[fns.index(call_cand)], times[fns.index(call_ref)]
    timing: dict[str, Any] = {"reference_eager": t_ref, "candidate": t_cand}
    speedup = t_ref["ms"] / t_cand["ms"] if t_cand["ms"] > 0 else None
    result.update(timing=timing, speedup_eager=speedup)
    if speedup is not None and speedup > config.reverify_speedup_above:
        # Too good to believe at once: check on new inputs again and time again.
        again = strict_trials.pointer_trial(config, call_ref, call_cand, gen, dev, seed_offset=11)
        retime = timer.measure(call_cand, make, config.warmup, config.timing_trials)
        timing["reverify"] = {"correct": again["ok"], "candidate": retime}
        speedup = t_ref["ms"] / max(retime["ms"], t_cand["ms"])
        if not again["ok"]:
            result.update(
                strict_failures=sorted(set(result.data.get("strict_failures", [])) | {"reverify_failed"})
            )
        result.update(timing=timing, speedup_eager=speedup, speedup_reverified=again["ok"])
    if beside is not None:
        measured = times[2] if len(times) > 2 else {"ms": None}  # None where inductor failed
        compiled: dict[str, Any] | None = {**measured, "source": "interleaved", **beside[1]}
    else:
        limit.lift("reference_compile")  # inductor compiling the reference is not the candidate's time
        with integrity.trusted(result):  # torch.compile patches torch itself: the snapshot is taken again
            compiled = compiled_reference_ms(spec, config, timer, make, ref_model, dev)
    timing["reference_compile"] = compiled
    ms_compile = compiled.get("ms") if compiled else None
    result.update(
        timing=timing,
        speedup_compile=(ms_compile / t_cand["ms"]) if ms_compile and t_cand["ms"] > 0 else None,
    )
