"""evaluate / evaluate_many: static checks -> build (parallel, cached) -> run (one per GPU).

Every verdict has the shape of `evaluator.verdict.Verdict`: `verdict` is the strict one, the one the
project counts; `verdict_kernelbench` and `correct_kernelbench` report what KernelBench's own rules would say.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import queue
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluator import device, sandbox, static_checks
from evaluator.config import EvalConfig
from evaluator.jobs import Job
from evaluator.problem import Problem
from evaluator.problem_facts import ProblemFacts, interleaved
from evaluator.verdict import Verdict, make

__all__ = ["EvalConfig", "evaluate", "evaluate_many"]

# Strict failures that mean "not a custom kernel doing the work" rather than "wrong numbers".
_HACK_FAILURES = {
    "no_custom_kernel_launched",
    "custom_kernel_share_below_min",
    "reference_work_still_runs",  # every kernel the reference launches still runs as often
    "output_ignores_custom_kernels",  # skipping the custom kernels leaves the output as it was
    "custom_kernels_only_copy",  # every extension call gave back a copy or cast of an argument
    "judge_tampered",  # the worker's own code or the libraries it judges with were changed at run time
}


@dataclass
class _State:
    job: Job
    config: EvalConfig
    t0: float = field(default_factory=time.perf_counter)
    seconds: dict[str, float] = field(default_factory=dict)
    source: str | None = None
    findings: list[dict[str, Any]] = field(default_factory=list)
    build: sandbox.WorkerRun | None = None
    workers: sandbox.WorkerGroup | None = None
    facts: ProblemFacts = field(default_factory=ProblemFacts)


def evaluate(problem: Problem, candidate_text: str, config: EvalConfig | None = None) -> Verdict:
    """Judge one raw model output (or bare program) against one problem."""
    return evaluate_many([Job("single", problem, candidate_text, config)], config)[0]


def evaluate_many(
    jobs: list[Job],
    config: EvalConfig | None = None,
    on_result: Callable[[str, Verdict], None] | None = None,
) -> list[Verdict]:
    """Judge many candidates: builds run in parallel (no GPU needed), runs go one at a time per GPU.

    `on_result(job_id, verdict)` is called as each finishes (the CLI writes and counts there).
    An interrupt (KeyboardInterrupt, or any error here) kills every worker and reports nothing more:
    a job cut short has no verdict, so a resumed batch runs it again.
    """
    base = config or EvalConfig()
    workers = sandbox.WorkerGroup()
    facts = ProblemFacts()
    states = [_State(job, job.config or base, workers=workers, facts=facts) for job in jobs]
    results: dict[int, Verdict] = {}
    slots: queue.Queue[int] = queue.Queue()
    for idx in _run_slots(base.backend, base.workers_per_device):
        slots.put(idx)

    # Reporting and stopping exclude each other: once `stop` has returned, no verdict is reported, so
    # the caller's count of reported verdicts is final (a verdict racing the stop is either reported
    # before it or dropped, and its job runs again on resume).
    reporting = threading.Lock()

    def finish(i: int, verdict: Verdict) -> None:
        with reporting:
            if workers.stopped:
                return
            results[i] = verdict
            if on_result is not None:
                on_result(states[i].job.job_id, verdict)

    def run_stage(i: int) -> None:
        st = states[i]
        slot = slots.get()
        try:
            finish(i, _run(st, slot))
        except Exception as exc:  # noqa: BLE001 - an evaluator bug must not sink the batch
            finish(i, _verdict(st, "runtime_error", {"evaluator_error": repr(exc)}, ""))
        finally:
            slots.put(slot)

    runners = ThreadPoolExecutor(max_workers=max(1, slots.qsize()))
    builders = ThreadPoolExecutor(max_workers=base.effective_compile_workers())

    def build_stage(i: int) -> None:
        st = states[i]
        try:
            early = _prepare(st)
        except Exception as exc:  # noqa: BLE001
            early = _verdict(st, "runtime_error", {"evaluator_error": repr(exc)}, "")
        if early is not None:
            finish(i, early)
        elif not workers.stopped:
            runners.submit(run_stage, i)

    try:
        for fut in [
            builders.submit(build_stage, i) for i in interleaved([st.job.problem.key for st in states])
        ]:
            fut.result()
        builders.shutdown()  # every run stage is queued once the last build stage has returned
        runners.shutdown()
    except BaseException:
        with reporting:
            workers.stop()
        builders.shutdown(wait=False, cancel_futures=True)
        runners.shutdown(wait=False, cancel_futures=True)
        raise
    return [results[i] for i in range(len(states))]


# ---------------------------------------------------------------- stages


def _prepare(st: _State) -> Verdict | None:
    """Check and build the job's code (extracted once, with the job); a final verdict when it stops here."""
    st.source = st.job.code
    if st.source is None:
        return _verdict(st, "no_code", {"reason": "no fenced block defining ModelNew"}, "")
    t = time.perf_counter()
    st.findings = static_checks.check_candidate(st.source, st.job.problem.source)
    st.seconds["static"] = time.perf_counter() - t
    if static_checks.rejected(st.findings):
        return _verdict(st, "static_reject", {"reason": "refused before running"}, "")
    if not _builds_ahead(st.source):
        st.seconds["build"] = 0.0
        return None
    marker = _build_marker(st)
    cached = _read_marker(marker)
    if cached is not None:
        st.seconds["build"] = 0.0
        if cached.get("build_error"):
            evidence = {"phase": "compile", "builds": cached.get("builds"), "cached": True}
            return _verdict(
                st, "compile_error", evidence, _tail(cached["build_error"], st.config.log_tail_chars)
            )
        return None
    t = time.perf_counter()
    st.build = sandbox.run_worker(
        "build",
        {"candidate": st.source, "config": st.config.to_dict(), "arch": device.arch_list(st.config.backend)},
        st.config.compile_timeout_s,
        _env(st.config, build=True),
        st.config.log_tail_chars,
        group=st.workers,
    )
    st.seconds["build"] = time.perf_counter() - t
    res = st.build.result or {}
    if st.build.timed_out:
        return _verdict(
            st,
            "timeout",
            {"phase": "compile", "limit_s": st.config.compile_timeout_s, "builds": res.get("builds")},
            st.build.log_tail,
        )
    if res.get("stage") == "done":
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(
            json.dumps({"builds": res.get("builds", []), "build_error": res.get("build_error")})
        )
    if res.get("build_error"):
        return _verdict(
            st,
            "compile_error",
            {"phase": "compile", "builds": res.get("builds")},
            _tail(res["build_error"], st.config.log_tail_chars),
        )
    return None


def _run(st: _State, slot: int) -> Verdict:
    shares = _shares(st.config)
    run = _run_worker(st, slot, shares, alone=shares == 1)
    if shares > 1 and _out_of_memory(run):
        # Beside other workers' checks the device may lack the memory this run needs: judge it again with
        # the device to itself, so a verdict never depends on what ran beside it.
        st.seconds["run_shared"] = st.seconds.pop("run")
        run = _run_worker(st, slot, shares, alone=True)
    r = run.result or {}
    st.facts.learn(st.job.problem.key, st.config, r)
    builds = r.get("builds") or ((st.build.result or {}).get("builds") if st.build else None)
    evidence: dict[str, Any] = {
        "phase": "run",
        "stage": r.get("stage"),
        "trials": r.get("trials"),
        "builds": builds,
        "sandbox_refusals": r.get("sandbox_refusals"),
    }
    if r.get("regions") is not None:
        evidence["regions"] = r["regions"]
    evidence["stage_seconds"] = r.get("stage_seconds")
    if run.timed_out and r.get("stage") != "done":
        evidence.update(limit_s=run.limit_s, limit_stage=run.limit_stage)
        return _verdict(st, "timeout", evidence, run.log_tail)
    kb = r.get("verdict_kernelbench")
    if kb is None or (kb == "correct" and r.get("stage") != "done"):
        evidence["exit"] = run.signal_name or run.returncode
        evidence["error"] = r.get("error")
        return _verdict(st, "runtime_error", evidence, run.log_tail, kb_verdict="runtime_error")
    if kb != "correct":
        evidence.update(error=r.get("error"), mismatch=r.get("evidence_mismatch"))
        log = (
            _tail(r["build_error"], st.config.log_tail_chars)
            if kb == "compile_error" and r.get("build_error")
            else _error_text(r.get("error")) + run.log_tail
        )
        return _verdict(st, kb, evidence, log[-st.config.log_tail_chars :], kb_verdict=kb)
    failures = list(r.get("strict_failures") or [])
    failures += [f["code"] for f in static_checks.hacks(st.findings)]
    evidence.update(
        strict=r.get("strict"),
        custom=r.get("custom"),
        timing=r.get("timing"),
        strict_failures=sorted(set(failures)),
        speedup_reverified=r.get("speedup_reverified"),
    )
    hack_codes = _HACK_FAILURES | {f["code"] for f in static_checks.hacks(st.findings)}
    if not failures:
        verdict = "correct"
    elif set(failures) - hack_codes:
        verdict = "wrong_output"  # wrong numbers under strict checks outrank how the code looks
    else:
        verdict = "static_reject"
    return _verdict(
        st,
        verdict,
        evidence,
        run.log_tail,
        kb_verdict="correct",
        speedup_eager=r.get("speedup_eager"),
        speedup_compile=r.get("speedup_compile"),
        custom_kernel_share=(r.get("custom") or {}).get("share"),
    )


def _run_worker(st: _State, slot: int, shares: int, alone: bool) -> sandbox.WorkerRun:
    """The run worker: on a share of its device (`alone`: the whole of it) once it has loaded."""
    prebuilt = st.build is None or (st.build.result or {}).get("stage") == "done"
    timeout = st.config.run_timeout_s + (0 if prebuilt else st.config.compile_timeout_s)
    payload = {
        "candidate": st.source,
        "problem": st.job.problem.to_dict(),
        "config": st.config.to_dict(),
        "arch": device.arch_list(st.config.backend),
        "baseline_entry": _baseline_entry(st),
        "regions": st.job.regions,
        "tolerances": st.facts.tolerances(st.job.problem.key, st.config),
        "reference_compile_known": st.facts.compiled(st.job.problem.key, st.config),
        "device_lock": str(_device_lock(st.config, slot)),
        "device_shares": shares,
        "alone": alone,
    }
    t = time.perf_counter()
    run = sandbox.run_worker(
        "run",
        payload,
        st.config.run_timeout_s,
        _env(st.config, build=False, slot=slot),
        st.config.log_tail_chars,
        start_marker="device_acquired",
        pre_start_timeout_s=timeout + st.config.run_timeout_s,
        group=st.workers,
    )
    st.seconds["run"] = time.perf_counter() - t
    if run.started_after_s is not None:
        st.seconds["load_and_wait"] = run.started_after_s
    return run


def _shares(config: EvalConfig) -> int:
    """Workers checking side by side on one device: a GPU only (CPU workers would share the cores that do
    the work, and slow each other's checks down)."""
    return max(1, config.device_shares) if config.backend == "cuda" else 1


def _out_of_memory(run: sandbox.WorkerRun) -> bool:
    error = (run.result or {}).get("error") or {}
    return error.get("type") == "OutOfMemoryError" or "CUDA out of memory" in str(error.get("message", ""))


def _verdict(
    st: _State,
    verdict: str,
    evidence: dict[str, Any],
    log_tail: str,
    kb_verdict: str | None = None,
    **measured: float | None,
) -> Verdict:
    st.seconds["total"] = time.perf_counter() - st.t0
    evidence = {
        **evidence,
        "build_phase": (st.build.result or {}).get("builds") if st.build else None,
        "seconds": {k: round(v, 3) for k, v in st.seconds.items()},
        "backend": st.config.backend,
        "gpu": device.gpu_name(st.config.backend),
        "torch": _torch_version(),
        "problem": st.job.problem.key,
    }
    return make(
        verdict,
        kernelbench=kb_verdict,
        evidence=evidence,
        log_tail=log_tail,
        static_findings=st.findings,
        **measured,
    )


# ---------------------------------------------------------------- helpers


def _env(config: EvalConfig, build: bool, slot: int = 0) -> dict[str, str]:
    cache = Path(config.cache_dir)
    env = {
        "MAX_JOBS": str(config.build_jobs),
        "TORCHINDUCTOR_CACHE_DIR": str(cache / "inductor"),
        "TRITON_CACHE_DIR": str(cache / "triton"),
    }
    arch = device.arch_list(config.backend)
    if arch:
        env["TORCH_CUDA_ARCH_LIST"] = arch
    # Builds need no GPU; runs see exactly the one they were given.
    env["CUDA_VISIBLE_DEVICES"] = "" if build or config.backend == "cpu" else str(slot)
    return env


def _run_slots(backend: str, per_device: int) -> list[int]:
    """`per_device` workers per GPU: some check or measure (evaluator.device_share) while the others import
    torch and load their candidate. On the cpu backend the device is the cores the starting workers would
    take from the one that runs: one runs, one starts."""
    if backend != "cuda":
        return [0] * min(2, max(1, per_device))
    return ([g.index for g in device.gpus()] or [0]) * max(1, per_device)


def _device_lock(config: EvalConfig, slot: int) -> Path:
    """Where the device's shares live for every evaluator process on this host (evaluator.device_share):
    the workers flock files beside this path."""
    lock_dir = Path(config.cache_dir) / "locks"
    lock_dir.mkdir(parents=True, exist_ok=True)
    return lock_dir / f"{config.backend}{slot}.lock"


def _builds_ahead(source: str) -> bool:
    """Whether a build worker has anything to do: a C++/CUDA extension (torch.utils.cpp_extension). A
    region program compiles its kernels with NVRTC in a fraction of a second as it loads, so a separate
    build process (seconds to start, import torch and exit) would only delay it."""
    return "cpp_extension" in source or "load_inline" in source


def _build_marker(st: _State) -> Path:
    """A candidate whose build finished before is not built again (not even a no-op ninja pass)."""
    ident = json.dumps(
        {
            "src": st.source,
            "backend": st.config.backend,
            "arch": device.arch_list(st.config.backend),
            "torch": _torch_version(),
            "python": sys.version.split()[0],
        }
    )
    key = hashlib.sha256(ident.encode()).hexdigest()[:24]
    return Path(st.config.cache_dir) / "built" / f"{key}.json"


def _read_marker(marker: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(marker.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def _torch_version() -> str:
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _baseline_entry(st: _State) -> dict[str, Any] | None:
    if st.config.reference_compile != "baseline" or not st.config.baseline_file:
        return None
    from evaluator.baseline import lookup

    return lookup(st.config.baseline_file, device.gpu_name(st.config.backend), st.job.problem)


def _tail(text: str, limit: int) -> str:
    return text[-limit:]


def _error_text(error: dict[str, Any] | None) -> str:
    if not error:
        return ""
    return f"{error.get('traceback') or error.get('message', '')}\n"
