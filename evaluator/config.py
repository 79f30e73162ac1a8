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
    l2_flush_bytes: int = 256 * 1024 * 1024
    reverify_speedup_above: float = 10.0
    # 'same_process' times torch.compile of the reference in the candidate's process; 'baseline' takes it
    # from `baseline_file` when that has the problem for this GPU and torch (else same_process); 'off'.
    reference_compile: Literal["same_process", "baseline", "off"] = "same_process"
    baseline_file: str | None = None
    # Isolation.
    gpu_memory_fraction: float = 0.9
    cache_dir: str = field(default_factory=default_cache_dir)
    build_jobs: int = 2
    # Run workers per device: while one holds the device, the others start (torch import, CUDA context,
    # loading the candidate). Two hide a start behind a whole-program run; a run of a few seconds, as a
    # region candidate's can be, may need more to keep the device busy.
    workers_per_device: int = 2
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
