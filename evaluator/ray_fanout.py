"""Judge a batch across a Ray cluster: `python -m evaluator run JOBS --out OUT --ray [ADDRESS]`.

One Ray task per job, asking for one GPU (one CPU on the cpu backend). The task calls `evaluate_many([job])`
on its node, so a candidate still gets its static checks, its build worker and its run worker process
there, exactly as on one host: Ray only decides where a job is judged. Verdicts come back as they finish
and go to the caller's `on_result` (the CLI's resumable writer). Ray is an optional extra, imported here
alone and only when asked for: the oracle itself needs torch and nothing else.
"""

from __future__ import annotations

import json
import logging
import signal
import sys
import threading
from collections import deque
from collections.abc import Callable, Collection
from pathlib import Path
from types import ModuleType
from typing import Any

from evaluator import device
from evaluator.api import evaluate_many
from evaluator.config import EvalConfig
from evaluator.jobs import Job, job_from_line
from evaluator.verdict import Verdict

MISSING = "install the ray extra: pip install -e '.[ray]' (or pip install 'ray>=2.40')"
PACKAGE = Path(__file__).resolve().parent
# Job lines and verdicts are kilobytes: a local cluster need not reserve the default 30% of RAM for them.
LOCAL_OBJECT_STORE_BYTES = 256 * 1024 * 1024
_POLL_S = 0.5  # how often the collector looks up from ray.wait, so a stop is seen promptly


class Unavailable(RuntimeError):
    """Ray is missing or the cluster cannot be reached or used: said in one line, nothing judged."""


def evaluate_on_ray(
    jobs: list[Job],
    jobs_file: str | Path,
    overrides: dict[str, Any],
    on_result: Callable[[str, Verdict], None],
    address: str | None = None,
    num_cpus: int | None = None,
    max_in_flight: int | None = None,
) -> list[str]:
    """Judge `jobs` (parsed from `jobs_file`) on a Ray cluster; returns the ids the cluster failed to judge.

    Each job's own line is sent, with the run's EvalConfig `overrides`: the node rebuilds the job over its
    own defaults (its cache directory, its GPUs). `address` None starts a local cluster of `num_cpus` CPUs
    (default: all); otherwise it is "auto", "host:port" or "ray://host:port". Either way the evaluator
    package travels with the tasks, so the nodes need only torch and ray. At most `max_in_flight` tasks
    (default: twice the cluster's slots) are submitted at once. Like `evaluate_many`, an interrupt cancels
    every task, reports nothing more and re-raises: a job cut short has no verdict and a rerun judges it.
    A task the cluster itself lost (a dead node or worker) leaves its job without a verdict too.
    """
    ray = _import_ray()
    if not jobs:
        return []  # nothing to judge: no cluster to start
    lines = _job_lines(jobs_file, {job.job_id for job in jobs})
    try:
        _connect(ray, address, num_cpus)
        _check_resources(ray, jobs, local=address is None)
        return _fan_out(ray, jobs, lines, overrides, on_result, max_in_flight)
    finally:
        ray.shutdown()  # a local cluster goes with it; a remote one keeps running


def judge_line(line: dict[str, Any], overrides: dict[str, Any]) -> Verdict:
    """The task body, on a node: the job rebuilt from its line over the node's defaults, then judged."""
    # Ray reuses a worker process across tasks and gives each task its GPU through CUDA_VISIBLE_DEVICES.
    device.gpus.cache_clear()
    config = EvalConfig().replace(**overrides)
    return evaluate_many([job_from_line(line, config)], config)[0]


def _import_ray() -> ModuleType:
    try:
        import ray
    except ImportError:
        raise Unavailable(MISSING) from None
    return ray


def _job_lines(path: str | Path, ids: Collection[str]) -> dict[str, dict[str, Any]]:
    """The raw line of each wanted job (the first line with its id, as `parse_jobs` keeps)."""
    found: dict[str, dict[str, Any]] = {}
    for text in Path(path).read_text().splitlines():
        try:
            data = json.loads(text)
            job_id = str(data["job_id"])
        except (json.JSONDecodeError, KeyError, TypeError):
            continue  # parse_jobs has reported it
        if job_id in ids and job_id not in found:
            found[job_id] = data
    return found


def _connect(ray: ModuleType, address: str | None, num_cpus: int | None) -> None:
    """Start a local cluster or join one; the package travels along, so a node needs no checkout."""
    sigterm = signal.getsignal(signal.SIGTERM)
    options: dict[str, Any] = {
        "runtime_env": {"py_modules": [str(PACKAGE)], "excludes": ["__pycache__", "*.pyc"]},
        "log_to_driver": False,  # the verdicts carry each candidate's log; the progress line stays whole
        "logging_level": logging.WARNING,
    }
    try:
        if address is None:
            # "local": a new cluster even where RAY_ADDRESS names another.
            ray.init(
                address="local",
                num_cpus=num_cpus,
                include_dashboard=False,
                object_store_memory=LOCAL_OBJECT_STORE_BYTES,
                **options,
            )
        else:
            ray.init(address=address, **options)
    except Exception as exc:  # noqa: BLE001 - any way of failing to connect is one line, not a traceback
        where = f"the Ray cluster at {address}" if address else "a local Ray cluster"
        raise Unavailable(f"cannot start or reach {where}: {exc}") from None
    finally:
        # ray.init makes SIGTERM exit at once; the CLI's stops it like Ctrl-C (workers killed, resumable).
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, sigterm)


def _resource(job: Job) -> str:
    return "GPU" if job.config is not None and job.config.backend == "cuda" else "CPU"


def _task_options(job: Job) -> dict[str, float]:
    """One GPU per cuda candidate, as on one host (its run worker sees only that GPU); one CPU otherwise."""
    return {"num_gpus": 1, "num_cpus": 1} if _resource(job) == "GPU" else {"num_cpus": 1}


def _check_resources(ray: ModuleType, jobs: list[Job], local: bool) -> None:
    """cuda jobs on a cluster without a GPU would wait forever: refuse on a local one, warn on another."""
    if not any(_resource(job) == "GPU" for job in jobs) or ray.cluster_resources().get("GPU", 0) >= 1:
        return
    message = "the Ray cluster has no GPU for the cuda backend's jobs"
    if local:
        raise Unavailable(f"{message} (judge them with --backend cpu, or on a cluster with GPUs)")
    print(f"warning: {message}; they wait until one joins", file=sys.stderr)


def _slots(ray: ModuleType, jobs: list[Job]) -> int:
    resources = ray.cluster_resources()
    return sum(int(resources.get(kind, 0)) for kind in {_resource(job) for job in jobs})


def _fan_out(
    ray: ModuleType,
    jobs: list[Job],
    lines: dict[str, dict[str, Any]],
    overrides: dict[str, Any],
    on_result: Callable[[str, Verdict], None],
    max_in_flight: int | None,
) -> list[str]:
    """Submit, collect and report from a collector thread; the caller's thread only waits, so an interrupt
    lands there and stops the collector between two reports, never inside one."""
    task = ray.remote(judge_line)
    limit = max(1, max_in_flight or 2 * _slots(ray, jobs))
    waiting = deque(jobs)
    running: dict[Any, str] = {}  # ObjectRef -> job id
    failed: list[str] = []
    errors: list[BaseException] = []
    stop = threading.Event()
    # Reporting and stopping exclude each other (as in evaluate_many): once stopped, nothing is reported.
    reporting = threading.Lock()

    def collect() -> None:
        try:
            while (waiting or running) and not stop.is_set():
                while waiting and len(running) < limit:
                    job = waiting.popleft()
                    ref = task.options(**_task_options(job)).remote(lines[job.job_id], overrides)
                    running[ref] = job.job_id
                ready, _ = ray.wait(list(running), num_returns=1, timeout=_POLL_S)
                for ref in ready:
                    job_id = running.pop(ref)
                    try:
                        verdict = ray.get(ref)
                    except ray.exceptions.RayError as exc:
                        failed.append(job_id)
                        reason = str(exc).strip().splitlines()[-1:] or [""]
                        sys.stderr.write(f"\n{job_id}: no verdict, {type(exc).__name__}: {reason[0]}\n")
                        continue
                    with reporting:
                        if stop.is_set():
                            return
                        on_result(job_id, verdict)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread, which raises it
            errors.append(exc)

    collector = threading.Thread(target=collect, name="ray-fanout", daemon=True)
    collector.start()
    try:
        while collector.is_alive():
            collector.join(_POLL_S)
    finally:
        with reporting:
            stop.set()
        collector.join(10 * _POLL_S)
        for ref in list(running):  # cut short: no verdict, so a rerun judges the job
            try:
                ray.cancel(ref, force=True)
            except Exception:  # noqa: BLE001 - already finished or gone; shutting down follows
                pass
    if errors:
        raise errors[0]
    return failed
