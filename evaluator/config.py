"""EvalConfig: every knob of an evaluation, JSON-serialisable so it travels to worker processes."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

Backend = Literal["cuda", "cpu"]


def default_cache_dir() -> str:
    """Builds and profiles outlive one run: keep them under the user's cache unless told otherwise."""
    root = os.environ.get("KERNELGRAPH_EVAL_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "kernelgraph", "evaluator"
    )
    return str(Path(root))


@dataclass
class EvalConfig:
    """How to judge a candidate. Defaults follow KernelBench where it defines them, stricter elsewhere."""

    backend: Backend = "cuda"
    # Limits (seconds). Compile and run are separate processes with separate limits.
    compile_timeout_s: float = 600.0
    run_timeout_s: float = 300.0
    # Once the reference's own time per call is known, each stage that calls the candidate may take
    # hang_floor_s + hang_factor x the reference's time for that stage's calls (never more than
    # run_timeout_s): a hang costs seconds, and a candidate 100x slower than the reference still finishes.
    hang_floor_s: float = 10.0
    hang_factor: float = 100.0
    # KernelBench-compatible correctness: seed 42 before each model's construction, 5 seeded trials.
    seed: int = 42
    trials: int = 5
    atol: float = 1e-4
    rtol: float = 1e-4
    # Strict mode additions.
    strict: bool = True
    signed_trial: bool = True
    # A reference whose every output is within this of zero cannot tell a kernel from zeros.
    tiny_output_abs: float = 1e-3
    strict_scale_rtol: float = 1e-2
    # One more strict trial, floating inputs in [-extreme_input_scale, extreme_input_scale): past float32's
    # exp overflow (~88.7), where an unguarded exp (softmax without its max subtraction) gives NaN while
    # the reference stays finite; products of 1e2-sized values stay far from float32's range.
    extreme_trial: bool = True
    extreme_input_scale: float = 100.0
    # Strict numerics (evaluator.numerics): each floating output's tolerance comes from the reference's own
    # float32 error against a float64 run of it: max(numerics_factor x that error, numerics_floor_ulps x the
    # dtype's eps x the output's largest value). Calibrated in benchmarks/numerics_calibration.py.
    numerics: bool = True
    numerics_factor: float = 32.0
    numerics_floor_ulps: float = 64.0
    numerics_trials: int = 2  # KernelBench trials the float64 run is made on; the tolerance holds for all 5
    numerics_max_reference_s: float = 1.0  # no float64 run for a reference slower than this a call
    numerics_budget_s: float = 60.0  # float64 runs stop (atol/rtol judge the rest) once they took this long
    # A forward whose compiled kernels take less than this share of its time is torch in disguise.
    min_custom_share: float = 0.01
    allow_tf32: bool = False
    # Timing.
    timing: bool = True
    warmup: int = 5
    timing_trials: int = 100
    # Trials stop early past this many seconds once timing_min_trials are done (None: always all of
    # them). Kernels under ~10 ms a call still get all 100; a 50 ms naive matmul gets ~20.
    timing_budget_s: float | None = 2.0
    timing_min_trials: int = 10
    # ... and as soon as each timed function's median is known to within this fraction (95% interval from
    # order statistics; None: never). Most of a correct region candidate's time on the device was timing
    # (H200: 86 s of 139 for 60 jobs), and for ms-scale kernels that agree to 1% the 100 trials add nothing.
    timing_precision: float | None = 0.01
    # ... relaxed, for the reference and a candidate whose medians are far apart, to a tenth of the log of
    # their ratio, at most this (None: never relaxed): a kernel at 0.12x eager is that whether known to 1%
    # or 5%. On the H200 the 14 timed level-1 products (0.04-0.9x) took 23 s of the 60 region jobs' 52 s of
    # timing, most stopped by the 2 s budget before their medians settled to 1% beside starting workers.
    timing_precision_far: float | None = 0.05
    l2_flush_bytes: int = 256 * 1024 * 1024
    reverify_speedup_above: float = 10.0
    # 'interleaved' compiles the reference with torch.compile in the candidate's process and times it in
    # the same trials as eager and the candidate, trial by trial (the comparison a speed claim needs; a
    # compile per candidate); 'same_process' times it there after them, once per problem and batch (later
    # candidates of the problem reuse it); 'baseline' takes it from `baseline_file` when that has the
    # problem for this GPU and torch (else same_process); 'off'.
    reference_compile: Literal["interleaved", "same_process", "baseline", "off"] = "same_process"
    baseline_file: str | None = None
    # Isolation.
    gpu_memory_fraction: float = 0.9
    cache_dir: str = field(default_factory=default_cache_dir)
    build_jobs: int = 2
    # Run workers per device: while some check or measure, the others start (torch import, CUDA context,
    # the judge's snapshot, loading the candidate: ~5 s). A region candidate's time on the device is a second
    # or two, so it takes several starting workers to keep one GPU busy (H200, 60 region jobs, cold:
    # 17.7 verdicts/min with four, 24.6 with eight; 23.7-25.8 with eight and 28.8-29.6 with twelve once the
    # reference is built before the share). On the cpu backend at most two (api._run_slots).
    workers_per_device: int = 12
    # How many of them may run their correctness checks on one device at once; profiling and timing always
    # have it alone (evaluator.device_share). 1: every run holds the device alone from its first call.
    device_shares: int = 3
    compile_workers: int = 0  # 0: one per 2 CPU cores (at least 1)
    log_tail_chars: int = 4000

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EvalConfig:
        """Build from a dict, refusing unknown keys so a typo in a job file is loud."""
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - names
        if unknown:
            raise ValueError(f"unknown EvalConfig fields: {sorted(unknown)}")
        return cls(**data)

    def replace(self, **overrides: Any) -> EvalConfig:
        return EvalConfig.from_dict({**self.to_dict(), **overrides})

    def effective_compile_workers(self) -> int:
        if self.compile_workers > 0:
            return self.compile_workers
        return max(1, (os.cpu_count() or 2) // 2)
