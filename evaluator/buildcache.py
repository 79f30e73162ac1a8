"""The build cache, installed inside worker processes around torch's load_inline and load.

Every build goes to `<cache>/builds/<name>_<key>`, key = sha256 of the sources, functions, flags, torch
version, arch list, Python version and backend, so an unchanged candidate never compiles twice (ninja
finds nothing to do) and concurrent builds of the same source share one directory (torch's file baton).
Returned extensions are wrapped to count calls: the strict verdict needs to know forward used them. In a
skip trial the wrapper does not call into the extension at all and returns a poisoned stand-in of what the
function returned before, so the strict verdict can tell whether the output needs the custom kernels.
"""

from __future__ import annotations

import fcntl
import hashlib
import inspect
import json
import os
import re
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evaluator import copycheck

_KERNEL_NAME = re.compile(r"__global__[^;{(]*?\b(\w+)\s*\(")
_LAUNCH_BOUNDS = re.compile(r"__launch_bounds__\s*\([^)]*\)")


def kernel_names(cuda_source: str) -> set[str]:
    """Names of the `__global__` functions in a CUDA source; the profiler looks for them by name.

    `__launch_bounds__(...)` may stand between `__global__ void` and the name: it is not a kernel.
    """
    return set(_KERNEL_NAME.findall(_LAUNCH_BOUNDS.sub(" ", cuda_source)))


class BuildRecorder:
    """What the candidate built and called; read by the worker when it writes its verdict."""

    def __init__(self) -> None:
        self.builds: list[dict[str, Any]] = []
        self.error: str | None = None
        self.kernel_names: set[str] = set()
        self.calls = 0
        self.call_seconds = 0.0
        self.in_build = threading.local()
        self.skipping = False  # the skip trial: extension calls return poisoned stand-ins, run nothing
        self.skipped = 0
        self.returned: dict[str, Any] = {}  # function name -> the form of what it last returned
        self.copy_calls: list[str] | None = None  # the copy check (evaluator.copycheck): each call's kind

    def building(self) -> bool:
        return getattr(self.in_build, "active", False)


class ExtensionProxy:
    """Forwards to a compiled extension and counts the calls made through it."""

    def __init__(self, module: Any, recorder: BuildRecorder) -> None:
        object.__setattr__(self, "_kg_module", module)
        object.__setattr__(self, "_kg_recorder", recorder)

    def __getattr__(self, name: str) -> Any:
        value = getattr(object.__getattribute__(self, "_kg_module"), name)
        if not callable(value):
            return value
        recorder = object.__getattribute__(self, "_kg_recorder")

        def counted(*args: Any, **kwargs: Any) -> Any:
            if recorder.skipping and name in recorder.returned:
                recorder.skipped += 1
                return poisoned(recorder.returned[name])
            checking = recorder.copy_calls is not None
            probe = _probe(args, kwargs) if checking else None
            t0 = time.perf_counter()
            try:
                out = value(*args, **kwargs)
                recorder.returned[name] = form_of(out)
                if checking and recorder.copy_calls is not None:
                    recorder.copy_calls.append(_classify(probe, out))
                return out
            finally:
                recorder.calls += 1
                recorder.call_seconds += time.perf_counter() - t0

        object.__setattr__(self, name, counted)  # looked up once: a model's forward calls it each time
        return counted

    def __repr__(self) -> str:
        return repr(object.__getattribute__(self, "_kg_module"))


def _probe(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    try:
        return copycheck.CallProbe(args, kwargs)
    except copycheck.OUT_OF_MEMORY:
        raise
    except Exception:  # noqa: BLE001 - no snapshot: the call is not judged a copy
        return None


def _classify(probe: Any, out: Any) -> str:
    if probe is None:
        return "unknown"
    try:
        return str(probe.classify(out))
    except copycheck.OUT_OF_MEMORY:
        raise
    except Exception:  # noqa: BLE001 - not judged a copy
        return "unknown"


def form_of(value: Any) -> Any:
    """What a stand-in must look like: tensors by shape, dtype and device; sequences item by item."""
    import torch

    if isinstance(value, torch.Tensor):
        return ("tensor", tuple(value.shape), value.dtype, value.device)
    if isinstance(value, list | tuple):
        return (type(value), [form_of(v) for v in value])
    return ("value", value)


def poisoned(form: Any) -> Any:
    """A stand-in of that form whose tensors hold NaN (floating) or zeros (integer: safe as an index)."""
    import torch

    if form[0] == "tensor":
        _, shape, dtype, device = form
        fill = float("nan") if dtype.is_floating_point or dtype.is_complex else 0
        return torch.full(shape, fill, dtype=dtype, device=device)
    if form[0] == "value":
        return form[1]
    kind, items = form
    return kind(poisoned(item) for item in items)


def build_key(parts: dict[str, Any], backend: str, arch: str) -> str:
    import torch

    payload = json.dumps(
        {
            **parts,
            "torch": torch.__version__,
            "arch": arch,
            "backend": backend,
            "python": sys.version.split()[0],
        },
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:20]


def install(cache_dir: str, backend: str, arch: str, recorder: BuildRecorder) -> None:
    """Patch torch.utils.cpp_extension.load_inline/load to build into the cache and wrap the result, and
    the region kind's NVRTC loader to be recorded and wrapped the same way."""
    from torch.utils import cpp_extension

    build_root = Path(cache_dir) / "builds"
    build_root.mkdir(parents=True, exist_ok=True)
    for attr in ("load_inline", "load"):
        original = getattr(cpp_extension, attr)
        if getattr(original, "_kg_patched", False):
            continue
        patched = _make_patched(original, attr, build_root, backend, arch, recorder)
        setattr(cpp_extension, attr, patched)
    _patch_region_loader(recorder)


def _patch_region_loader(recorder: BuildRecorder) -> None:
    """Region candidates compile through NVRTC (evaluator.regions.launch), in milliseconds and without a
    build directory; they are recorded and wrapped exactly as a load_inline build is, so the call counts,
    the skip trial and the custom-kernel share treat both kinds alike."""
    from evaluator.regions import launch

    original = launch.load_region_kernel
    if getattr(original, "_kg_patched", False):
        return

    def patched(**kwargs: Any) -> Any:
        recorder.kernel_names.add(str(kwargs["kernel"]))
        key = hashlib.sha256(str(kwargs["source"]).encode()).hexdigest()[:20]
        build = {"name": str(kwargs["name"]), "key": key, "cached": False, "kind": "nvrtc"}
        t0 = time.perf_counter()
        recorder.in_build.active = True  # loading libnvrtc and libcuda is the build's, not the candidate's
        try:
            module = original(**kwargs)
        except Exception as exc:
            recorder.error = f"{type(exc).__name__}: {exc}"
            recorder.builds.append(build | {"ok": False, "seconds": round(time.perf_counter() - t0, 3)})
            raise
        finally:
            recorder.in_build.active = False
        recorder.builds.append(build | {"ok": True, "seconds": round(time.perf_counter() - t0, 3)})
        return ExtensionProxy(module, recorder)

    patched._kg_patched = True  # type: ignore[attr-defined]
    launch.load_region_kernel = patched


def _make_patched(
    original: Callable[..., Any],
    kind: str,
    build_root: Path,
    backend: str,
    arch: str,
    recorder: BuildRecorder,
) -> Callable[..., Any]:
    signature = inspect.signature(original)
    loaded: dict[str, Any] = {}

    def patched(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        params = bound.arguments
        if backend == "cpu" and (params.get("cuda_sources") or _has_cuda_files(params.get("sources"))):
            msg = "the cpu backend builds C++ only (cpp_sources); this candidate passed CUDA sources"
            recorder.error = msg
            raise RuntimeError(msg)
        parts = _key_parts(kind, params)
        key = build_key(parts, backend, arch)
        if key in loaded:  # built earlier in this process (the parallel prebuild): never import twice
            return loaded[key]
        name = str(params["name"])
        build_dir = build_root / f"{re.sub(r'[^A-Za-z0-9_]', '_', name)[:40]}_{key}"
        build_dir.mkdir(parents=True, exist_ok=True)
        params["build_directory"] = str(build_dir)
        params["verbose"] = False
        for src in _as_list(params.get("cuda_sources")):
            recorder.kernel_names.update(kernel_names(src))
        marker = build_dir / ".kg_built"
        failed = build_dir / ".kg_failed"
        cached = marker.exists()
        if not cached and failed.exists():
            # The same sources, flags, torch and arch failed before: the compiler would only say it again.
            recorder.error = failed.read_text()
            recorder.builds.append({"name": name, "key": key, "cached": True, "ok": False, "seconds": 0.0})
            raise RuntimeError(recorder.error)
        t0 = time.perf_counter()
        recorder.in_build.active = True
        lock = open(build_dir / ".kg_lock", "w")  # noqa: SIM115 - held for the whole build
        try:
            # Our lock dies with its process; torch's baton file does not, and a build killed at its
            # time limit would leave it behind for every later build of this source to wait on forever.
            fcntl.flock(lock, fcntl.LOCK_EX)
            (build_dir / "lock").unlink(missing_ok=True)
            module = original(*bound.args, **bound.kwargs)
        except Exception as exc:  # compiler and linker errors arrive as RuntimeError with the log
            recorder.error = f"{type(exc).__name__}: {exc}"
            failed.write_text(recorder.error)
            recorder.builds.append(
                {
                    "name": name,
                    "key": key,
                    "cached": cached,
                    "ok": False,
                    "seconds": round(time.perf_counter() - t0, 3),
                }
            )
            raise
        finally:
            recorder.in_build.active = False
            lock.close()
        marker.write_text(key)
        recorder.builds.append(
            {
                "name": name,
                "key": key,
                "cached": cached,
                "ok": True,
                "seconds": round(time.perf_counter() - t0, 3),
            }
        )
        if params.get("is_python_module", True) is not False:
            module = ExtensionProxy(module, recorder)
        loaded[key] = module
        return module

    patched._kg_patched = True  # type: ignore[attr-defined]
    patched.__signature__ = signature  # type: ignore[attr-defined]
    return patched


def _key_parts(kind: str, params: dict[str, Any]) -> dict[str, Any]:
    skip = {"build_directory", "verbose", "keep_intermediates"}
    parts: dict[str, Any] = {"kind": kind}
    for k, v in params.items():
        if k in skip:
            continue
        if k == "sources":
            parts[k] = [_file_digest(p) for p in _as_list(v)]
        else:
            parts[k] = v
    parts["env"] = {
        k: os.environ.get(k, "") for k in ("TORCH_CUDA_ARCH_LIST", "CXX", "CC", "NVCC_APPEND_FLAGS")
    }
    return parts


def _file_digest(path: str) -> str:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return f"missing:{path}"


def _has_cuda_files(sources: Any) -> bool:
    return any(str(s).endswith(".cu") for s in _as_list(sources))


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]
