"""Compile a region kernel with NVRTC through ctypes: a 25-50 ms check that needs no GPU and no toolkit.

The library comes from KERNELGRAPH_NVRTC, else the nvidia-cuda-nvrtc wheel (found through its metadata,
its Python code is never imported), else the NVIDIA libraries torch brings on a GPU host. The result keeps
the PTX (what cuModuleLoadData takes on the GPU host) and the log parsed into diagnostics, which `annotate`
turns into the repair text a model reads: the message, the offending line and a caret.
"""

from __future__ import annotations

import ctypes
import functools
import importlib.metadata
import importlib.util
import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

ENV_VAR = "KERNELGRAPH_NVRTC"
WHEEL = "nvidia-cuda-nvrtc"
NVRTC_SUCCESS = 0

# `kernel.cu(12): error: identifier "foo" is undefined`, `kernel.cu(2): warning #177-D: ...`,
# and location-less ones such as `nvrtc: error: invalid value for --gpu-architecture (-arch)`.
_LOCATED = re.compile(
    r"^(?P<file>[^\n()]+)\((?P<line>\d+)\): (?P<sev>catastrophic error|error|warning|remark)"
    r"(?: #[\w-]+)?: (?P<msg>.*)$"
)
_UNLOCATED = re.compile(r"^nvrtc: (?P<sev>error|warning): (?P<msg>.*)$")
# NVRTC echoes the offending line and a caret under it, both indented by two spaces.
_ECHO_INDENT = "  "


class NvrtcUnavailable(RuntimeError):
    """No loadable libnvrtc; the message names every place searched so the fix is obvious."""


class Diagnostic(NamedTuple):
    """One message of the compile log; `line` is None for option errors, `column` (1-based) when known."""

    line: int | None
    column: int | None
    severity: str
    message: str


@dataclass(frozen=True)
class Compiled:
    """The outcome of one NVRTC compile; `ptx` is empty when it failed. `cubin` is the machine code for a
    real architecture (`sm_XX`), which the driver loads without a JIT step; empty for virtual ones."""

    ok: bool
    log: str
    ptx: str
    seconds: float
    diagnostics: list[Diagnostic] = field(default_factory=list)
    cubin: bytes = b""

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if "error" in d.severity]


def _is_main_library(path: Path) -> bool:
    """libnvrtc.so[.N] itself: not the builtins it loads, not the `.alt` variant (other C++ ABI)."""
    return path.name.startswith("libnvrtc.so")


def _wheel_libraries() -> list[Path]:
    """libnvrtc from the nvidia-cuda-nvrtc wheel's recorded files; its Python code is never imported."""
    try:
        files = importlib.metadata.files(WHEEL) or []
    except importlib.metadata.PackageNotFoundError:
        return []
    paths = (Path(str(f.locate())) for f in files)
    return sorted(p for p in paths if _is_main_library(p))


def _torch_site_dirs() -> list[Path]:
    """Where torch keeps its CUDA libraries: torch/lib and site-packages/nvidia (found without importing
    torch, which takes a second)."""
    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        return []
    torch_dir = Path(spec.origin).parent
    return [torch_dir / "lib", torch_dir.parent / "nvidia"]


def _torch_libraries(dirs: list[Path]) -> Iterator[Path]:
    for d in dirs:
        if d.is_dir():
            yield from sorted(p for p in d.rglob("libnvrtc*.so*") if _is_main_library(p))


def find_library() -> Path:
    """The libnvrtc to load. An explicit KERNELGRAPH_NVRTC is used alone: a wrong setting should fail
    loudly rather than fall back to another library silently."""
    explicit = os.environ.get(ENV_VAR)
    if explicit:
        if Path(explicit).is_file():
            return Path(explicit)
        raise NvrtcUnavailable(f"libnvrtc not found: {ENV_VAR}={explicit} is not a file")
    found = _wheel_libraries()
    if found:
        return found[0]
    dirs = _torch_site_dirs()
    if path := next(_torch_libraries(dirs), None):
        return path
    searched = [f"{ENV_VAR} (unset)", f"the {WHEEL} wheel's files (package metadata)"]
    searched += [f"{d} (libnvrtc*.so*)" for d in dirs] or ["torch's directories (torch not installed)"]
    raise NvrtcUnavailable(
        f"libnvrtc not found; searched: {'; '.join(searched)}. "
        f"Install {WHEEL} or set {ENV_VAR} to the path of libnvrtc.so."
    )


def load_library(path: Path) -> ctypes.CDLL:
    """Load libnvrtc. It dlopens libnvrtc-builtins by soname at compile time, which the loader would not
    find in a wheel's directory; loading the builtins beside it first by full path makes that resolve."""
    try:
        for builtins in sorted(path.parent.glob("libnvrtc-builtins.so*")):  # not the .alt.so variant
            ctypes.CDLL(str(builtins), mode=ctypes.RTLD_GLOBAL)
        lib = ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
    except OSError as e:
        raise NvrtcUnavailable(f"libnvrtc at {path} could not be loaded: {e}") from e
    lib.nvrtcGetErrorString.restype = ctypes.c_char_p
    return lib


@functools.cache
def _library() -> ctypes.CDLL:
    return load_library(find_library())


def parse_log(log: str) -> list[Diagnostic]:
    """Diagnostics from an NVRTC log; the column comes from the caret line NVRTC prints under the echo."""
    lines = log.splitlines()
    out = []
    for i, text in enumerate(lines):
        if m := _LOCATED.match(text):
            column = None
            if i + 2 < len(lines) and lines[i + 2].startswith(_ECHO_INDENT) and lines[i + 2].strip() == "^":
                column = lines[i + 2].index("^") - len(_ECHO_INDENT) + 1
            out.append(Diagnostic(int(m["line"]), column, m["sev"], m["msg"].strip()))
        elif m := _UNLOCATED.match(text):
            out.append(Diagnostic(None, None, m["sev"], m["msg"].strip()))
    return out


def _check(lib: ctypes.CDLL, result: int, what: str) -> None:
    if result != NVRTC_SUCCESS:
        raise RuntimeError(f"{what} failed: {lib.nvrtcGetErrorString(result).decode()}")


def _read(lib: ctypes.CDLL, prog: ctypes.c_void_p, size_fn: str, get_fn: str) -> str:
    size = ctypes.c_size_t()
    _check(lib, getattr(lib, size_fn)(prog, ctypes.byref(size)), size_fn)
    buf = ctypes.create_string_buffer(size.value)
    _check(lib, getattr(lib, get_fn)(prog, buf), get_fn)
    return buf.value.decode(errors="replace")


def _read_bytes(lib: ctypes.CDLL, prog: ctypes.c_void_p, size_fn: str, get_fn: str) -> bytes:
    size = ctypes.c_size_t()
    _check(lib, getattr(lib, size_fn)(prog, ctypes.byref(size)), size_fn)
    buf = ctypes.create_string_buffer(size.value)
    _check(lib, getattr(lib, get_fn)(prog, buf), get_fn)
    return buf.raw


def compile_kernel(
    source: str, name: str = "kernel.cu", arch: str = "sm_90", options: list[str] | None = None
) -> Compiled:
    """Compile `source` to PTX for `arch`; a compile error is a result (ok=False), not an exception."""
    lib = _library()
    opts = [f"--gpu-architecture={arch}", "-std=c++17", *(options or [])]
    argv = (ctypes.c_char_p * len(opts))(*(o.encode() for o in opts))
    prog = ctypes.c_void_p()
    start = time.perf_counter()
    _check(
        lib,
        lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), name.encode(), 0, None, None),
        "nvrtcCreateProgram",
    )
    try:
        result = lib.nvrtcCompileProgram(prog, len(opts), argv)
        log = _read(lib, prog, "nvrtcGetProgramLogSize", "nvrtcGetProgramLog")
        ok = result == NVRTC_SUCCESS
        ptx = _read(lib, prog, "nvrtcGetPTXSize", "nvrtcGetPTX") if ok else ""
        cubin = _read_bytes(lib, prog, "nvrtcGetCUBINSize", "nvrtcGetCUBIN") if ok and "sm_" in arch else b""
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))
    seconds = time.perf_counter() - start
    if not ok and not log.strip():
        log = f"nvrtc: error: {lib.nvrtcGetErrorString(result).decode()}"
    return Compiled(ok, log, ptx, seconds, parse_log(log), cubin)


def annotate(source: str, compiled: Compiled, limit: int = 3) -> str:
    """The first `limit` errors as a compiler prints them: message, offending source line, caret under the
    column (or under the line's first non-space character when the column is unknown). No line numbers:
    they count the prelude and skeleton, which the model never saw; the line's text is what it can find."""
    lines = source.splitlines()
    blocks = []
    for d in compiled.errors[:limit]:
        if d.line is None or not 1 <= d.line <= len(lines):
            blocks.append(f"error: {d.message}")
            continue
        text = lines[d.line - 1]
        col = d.column if d.column is not None else len(text) - len(text.lstrip()) + 1
        # Keep tabs in the caret line's padding so the caret sits under the same character.
        pad = "".join(c if c == "\t" else " " for c in text[: col - 1])
        blocks.append(f"{d.severity}: {d.message}\n    {text}\n    {pad}^")
    return "\n\n".join(blocks)
