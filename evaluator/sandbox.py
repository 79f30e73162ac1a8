"""Start a worker in its own process group with a time limit, a clean environment and a captured log."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

STAGE_LIMIT_FILE = "stage_limit.json"  # written by the worker (runtime.StageLimit), read here

_PACKAGE_PARENT = str(Path(__file__).resolve().parent.parent)
_ENV_KEEP = (
    "PATH",
    "LANG",
    "LC_ALL",
    "CUDA_HOME",
    "CUDA_PATH",
    "LD_LIBRARY_PATH",
    "CC",
    "CXX",
    "NCCL_NVLS_ENABLE",
    "TORCH_SYMM_MEM_DISABLE_MULTICAST",
    "NVSHMEM_DISABLE_NVLS",
    "TRITON_CACHE_DIR",
    "TORCHINDUCTOR_CACHE_DIR",
)


@dataclass
class WorkerRun:
    """What a worker process left behind: its result file (possibly partial) and how it ended."""

    result: dict[str, Any] | None
    returncode: int | None
    timed_out: bool
    seconds: float
    log_tail: str
    started_after_s: float | None = None
    limit_s: float | None = None  # the limit that was in force when it timed out
    limit_stage: str | None = None  # the worker's stage limit that killed it; None: the whole run limit

    @property
    def signal_name(self) -> str | None:
        if self.returncode is not None and self.returncode < 0:
            return signal.Signals(-self.returncode).name
        return None


class Stopped(RuntimeError):
    """The batch this worker belonged to was interrupted before the worker started."""


class WorkerGroup:
    """The live workers of one batch, so an interrupted batch kills them instead of orphaning them.

    Workers run in their own sessions (a candidate's hang must not take the caller's terminal signals),
    so nothing else would stop them: left behind, they hold build locks and the GPU for the next batch.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pgids: set[int] = set()
        self._stopped = False

    @property
    def stopped(self) -> bool:
        return self._stopped

    def stop(self) -> None:
        """Kill every live worker's process group and refuse new ones."""
        with self._lock:
            self._stopped = True
            pgids = list(self._pgids)
        for pgid in pgids:
            _kill_group(pgid)

    def _add(self, pgid: int) -> None:
        with self._lock:
            self._pgids.add(pgid)
            stopped = self._stopped
        if stopped:
            _kill_group(pgid)

    def _discard(self, pgid: int) -> None:
        with self._lock:
            self._pgids.discard(pgid)


def worker_env(extra: dict[str, str]) -> dict[str, str]:
    """Only what a build and a run need; nothing of the caller's secrets or Python path."""
    env = {k: os.environ[k] for k in _ENV_KEEP if k in os.environ}
    env["PYTHONPATH"] = _PACKAGE_PARENT
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(extra)
    return env


def run_worker(
    mode: str,
    payload: dict[str, Any],
    timeout_s: float,
    env_extra: dict[str, str],
    log_tail_chars: int = 4000,
    keep_dir: str | None = None,
    start_marker: str | None = None,
    pre_start_timeout_s: float | None = None,
    group: WorkerGroup | None = None,
) -> WorkerRun:
    """Run `python -m evaluator.worker` for one phase; kill its whole process group on timeout.

    The worker also dies with this process (see `evaluator.worker`); `group` lets a batch stop it early.
    """
    if group is not None and group.stopped:
        raise Stopped(mode)
    scratch = Path(tempfile.mkdtemp(prefix=f"kg_{mode}_", dir=keep_dir))
    spec_path = scratch / "spec.json"
    result_path = scratch / "result.json"
    log_path = scratch / "log.txt"
    spec_path.write_text(
        json.dumps(
            {
                **payload,
                "mode": mode,
                "scratch": str(scratch),
                "result_path": str(result_path),
                "parent_pid": os.getpid(),
            }
        )
    )
    env = worker_env({**env_extra, "HOME": str(scratch), "TMPDIR": str(scratch)})
    t0 = time.perf_counter()
    timed_out = False
    waited: float | None = None
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-s", "-m", "evaluator.worker", str(spec_path)],
            cwd=scratch,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        if group is not None:
            group._add(proc.pid)
        # With a start marker, the time limit starts when the worker creates it (after it got its GPU);
        # before that only the generous pre-start limit applies (loading, building, waiting its turn).
        # From then on the worker may also set a shorter limit per stage (runtime.StageLimit).
        run_deadline = t0 + (pre_start_timeout_s or timeout_s if start_marker else timeout_s)
        stage = _StageWatch(scratch / STAGE_LIMIT_FILE)
        while True:
            try:
                proc.wait(timeout=0.2)
                break
            except subprocess.TimeoutExpired:
                pass
            now = time.perf_counter()
            if start_marker and waited is None and (scratch / start_marker).exists():
                waited = now - t0
                run_deadline = now + timeout_s
            if waited is not None or not start_marker:
                stage.poll(now)
            if now > min(run_deadline, stage.deadline):
                timed_out = True
                break
        _kill_group(proc.pid)  # also reaps anything the candidate left running
        proc.wait()
        if group is not None:
            group._discard(proc.pid)
    seconds = time.perf_counter() - t0
    result = None
    if result_path.exists():
        try:
            result = json.loads(result_path.read_text())
        except json.JSONDecodeError:
            result = None
    tail = log_path.read_bytes()[-log_tail_chars:].decode(errors="replace")
    _cleanup(scratch)
    by_stage = timed_out and stage.deadline < run_deadline
    return WorkerRun(
        result=result,
        returncode=None if timed_out else proc.returncode,
        timed_out=timed_out,
        seconds=seconds,
        log_tail=tail,
        started_after_s=waited,
        limit_s=(stage.seconds if by_stage else timeout_s) if timed_out else None,
        limit_stage=stage.stage if by_stage else None,
    )


class _StageWatch:
    """The worker's current stage limit (see runtime.StageLimit), re-read whenever the file changes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.deadline = float("inf")
        self.seconds: float | None = None
        self.stage: str | None = None
        self._seq = 0

    def poll(self, now: float) -> None:
        try:
            data = json.loads(self.path.read_text())
        except (OSError, json.JSONDecodeError):
            return  # none set yet (or mid-replace: the next poll reads it)
        if not isinstance(data, dict) or data.get("seq", 0) <= self._seq:
            return
        self._seq = data["seq"]
        self.seconds, self.stage = data.get("seconds"), data.get("stage")
        self.deadline = now + self.seconds if self.seconds is not None else float("inf")


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _cleanup(scratch: Path) -> None:
    for path in sorted(scratch.rglob("*"), reverse=True):
        try:
            path.rmdir() if path.is_dir() and not path.is_symlink() else path.unlink()
        except OSError:
            pass
    try:
        scratch.rmdir()
    except OSError:
        pass
