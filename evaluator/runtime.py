"""What every worker phase shares: the result file, loading problem and candidate modules, the device."""

from __future__ import annotations

import importlib.util
import json
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from evaluator import buildcache, guard
from evaluator.config import EvalConfig
from evaluator.device_share import DeviceShare
from evaluator.sandbox import STAGE_LIMIT_FILE


class Result:
    """The worker's verdict so far, flushed to disk atomically after each stage.

    Each stage's wall time goes into `stage_seconds` as the stage changes: where a worker's time goes
    (waiting for the device, the reference, the checks, profiling, timing) is what evaluator throughput
    is made of, and the GPU host's runs are too short and too few to find out any other way."""

    def __init__(self, path: str) -> None:
        self.path = Path(path)
        self.data: dict[str, Any] = {"stage": "start", "stage_seconds": {}}
        self._since = time.perf_counter()

    def update(self, **fields: Any) -> None:
        stage = fields.get("stage")
        if stage is not None and stage != self.data.get("stage"):
            now = time.perf_counter()
            spent = self.data["stage_seconds"]
            left = str(self.data.get("stage"))
            spent[left] = round(spent.get(left, 0.0) + now - self._since, 3)
            self._since = now
        self.data.update(fields)
        tmp = self.path.with_suffix(".tmp")
        with guard.suspended():  # a failure reported from inside the sandbox must still be written
            tmp.write_text(json.dumps(self.data, default=_jsonable))
            tmp.replace(self.path)


class StageLimit:
    """Tells the parent how long the next stage may run, scaled from the reference's own time per call.

    A hung kernel blocks this process inside CUDA, where nothing in it can time itself out; the parent
    (evaluator.sandbox) reads this file and kills the worker when the stage's limit passes, so a hang costs
    `hang_floor_s` plus a multiple of the reference's time, not the whole `run_timeout_s`.
    """

    def __init__(self, scratch: Path, config: EvalConfig, seconds_per_call: float) -> None:
        self.path = scratch / STAGE_LIMIT_FILE
        self.config = config
        self.seconds_per_call = seconds_per_call
        self.seq = 0

    def calls(self, n: float, stage: str, extra_per_call_s: float = 0.0) -> float:
        """Allow `n` reference-sized calls (making inputs included, plus `extra_per_call_s` each, e.g. a
        cache flush) for `stage`; returns the limit in seconds."""
        per_call = self.seconds_per_call + extra_per_call_s
        seconds = self.config.hang_floor_s + self.config.hang_factor * n * per_call
        self._write({"stage": stage, "seconds": round(seconds, 3)})
        return seconds

    def lift(self, stage: str) -> None:
        """Only the run limit applies again (work that is not the candidate's, e.g. torch.compile)."""
        self._write({"stage": stage, "seconds": None})

    def _write(self, data: dict[str, Any]) -> None:
        self.seq += 1
        tmp = self.path.with_suffix(".tmp")
        with guard.suspended():
            tmp.write_text(json.dumps({**data, "seq": self.seq}))
            tmp.replace(self.path)


def _jsonable(value: Any) -> Any:
    if isinstance(value, set):
        return sorted(value)
    return repr(value)


def load_module(name: str, source: str, scratch: Path) -> ModuleType:
    """Import source as a real module from a file, so tracebacks show the candidate's lines."""
    path = scratch / f"{name}.py"
    path.write_text(source)
    module_spec = importlib.util.spec_from_file_location(name, path)
    assert module_spec and module_spec.loader
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    module_spec.loader.exec_module(module)
    return module


def error_info(exc: BaseException, limit: int = 3000) -> dict[str, Any]:
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return {"type": type(exc).__name__, "message": str(exc)[-limit:], "traceback": tb[-limit:]}


def setup(spec: dict[str, Any], config: EvalConfig) -> tuple[buildcache.BuildRecorder, Path]:
    scratch = Path(spec["scratch"])
    recorder = buildcache.BuildRecorder()
    buildcache.install(config.cache_dir, config.backend, spec.get("arch", ""), recorder)
    guard.install([str(scratch), config.cache_dir, tempfile.gettempdir()], recorder.building)
    return recorder, scratch


def select_device(config: EvalConfig) -> torch.device:
    if config.backend == "cuda":
        if not torch.cuda.is_available():
            raise RuntimeError("backend 'cuda' but this worker sees no CUDA device")
        dev = torch.device("cuda", 0)
        torch.cuda.set_device(dev)
        torch.cuda.set_per_process_memory_fraction(config.gpu_memory_fraction, dev)
        return dev
    return torch.device("cpu")


def acquire_device(spec: dict[str, Any], scratch: Path) -> None:
    """Wait for a share of this GPU (evaluator.device_share), then tell the parent the clock starts.

    With `alone` in the spec (a run that ran out of memory beside others, judged again) the worker takes
    the whole device at once, as it would for timing."""
    lock_path = spec.get("device_lock")
    if lock_path:
        _SHARE.append(DeviceShare(lock_path, int(spec.get("device_shares") or 1)))
        if spec.get("alone"):
            _SHARE[0].alone()
        else:
            _SHARE[0].shared()
    (scratch / "device_acquired").touch()


@contextmanager
def device_quiet(spec: dict[str, Any]) -> Iterator[None]:
    """GPU work before the share (evaluator.device_share.DeviceShare.quiet); a run that already holds the
    device alone (judged again for memory) needs no more."""
    lock_path = spec.get("device_lock")
    if not lock_path or spec.get("alone"):
        yield
        return
    with DeviceShare(lock_path, int(spec.get("device_shares") or 1)).quiet():
        yield


def device_alone(limit: StageLimit | None = None) -> None:
    """Have the device to itself before profiling or timing: other workers' checks would be in the numbers.

    The wait is not the candidate's time: only the run's own limit applies while it lasts. Cached blocks go
    back first, so the worker that measures has the memory the waiting ones do not hold."""
    if not _SHARE or _SHARE[0].alone_held:
        return
    if limit is not None:
        limit.lift("wait_device")
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.empty_cache()
    _SHARE[0].alone()


_SHARE: list[DeviceShare] = []


def set_precision(config: EvalConfig) -> None:
    torch.backends.cuda.matmul.allow_tf32 = config.allow_tf32
    torch.backends.cudnn.allow_tf32 = config.allow_tf32


def construct(cls: type, init_inputs: list[Any], seed: int, device: torch.device) -> torch.nn.Module:
    torch.manual_seed(seed)  # KernelBench: the same seed before each model's construction
    with torch.device(device):
        model = cls(*init_inputs)
    return model.to(device)


def device_name(dev: torch.device) -> str:
    return torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu"
