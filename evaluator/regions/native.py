"""The C half of the region launcher (native_launch.c), built once per machine with the host's C compiler.

One file against Python.h alone, no torch headers and no CUDA: it compiles in a fraction of a second, into
a cache keyed by its source and the interpreter, and later processes load it at once. Where it cannot be
built (no compiler, no Python headers) `load` says why and the launcher keeps its ctypes path.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.machinery
import importlib.util
import os
import shutil
import subprocess
import sysconfig
import tempfile
from pathlib import Path
from types import ModuleType

SOURCE = Path(__file__).with_name("native_launch.c")
MODULE = "kg_native_launch"
ENV_DIR = "KERNELGRAPH_NATIVE_DIR"
BUILD_TIMEOUT_S = 120


class NativeUnavailable(RuntimeError):
    """The C launcher could not be built or loaded; the message says what was missing."""


@functools.cache
def load() -> ModuleType:
    """The built module (built now if this machine has none yet); NativeUnavailable if it cannot be."""
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    include = sysconfig.get_paths()["include"]
    key = hashlib.sha256(SOURCE.read_bytes() + suffix.encode() + include.encode()).hexdigest()[:16]
    target = _cache_dir() / f"{MODULE}-{key}{suffix}"
    if not target.exists():
        _build(target, include)
    spec = importlib.util.spec_from_file_location(
        MODULE, target, loader=importlib.machinery.ExtensionFileLoader(MODULE, str(target))
    )
    if spec is None or spec.loader is None:
        raise NativeUnavailable(f"cannot load {target}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cache_dir() -> Path:
    root = os.environ.get(ENV_DIR) or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "kernelgraph", "native"
    )
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


def _build(target: Path, include: str) -> None:
    """Compile into a temporary file beside the target and move it in: processes building at once each
    finish with a whole file."""
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise NativeUnavailable("no C compiler (cc, gcc or $CC) to build the region launcher")
    if not Path(include, "Python.h").exists():
        raise NativeUnavailable(f"no Python.h under {include} to build the region launcher")
    fd, scratch = tempfile.mkstemp(suffix=target.suffix, dir=target.parent)
    os.close(fd)
    try:
        command = [*compiler.split(), "-O2", "-shared", "-fPIC", f"-I{include}", str(SOURCE), "-o", scratch]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise NativeUnavailable(f"building the region launcher failed: {exc}") from exc
        if done.returncode != 0:
            raise NativeUnavailable(f"building the region launcher failed:\n{done.stderr[-2000:]}")
        os.replace(scratch, target)
    finally:
        if os.path.exists(scratch):
            os.unlink(scratch)
