"""What GPUs this host has, asked of nvidia-smi so the calling process never creates a CUDA context."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from dataclasses import dataclass


@dataclass(frozen=True)
class Gpu:
    index: int
    name: str
    arch: str  # compute capability, e.g. "9.0": the TORCH_CUDA_ARCH_LIST entry to build for


@functools.cache
def gpus() -> tuple[Gpu, ...]:
    """Visible GPUs (honouring CUDA_VISIBLE_DEVICES given as indices); empty without nvidia-smi."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return ()
    try:
        out = subprocess.run(
            [smi, "--query-gpu=index,name,compute_cap", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout
    except (subprocess.SubprocessError, OSError):
        return ()
    found = []
    for line in out.strip().splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 3 and parts[0].isdigit():
            found.append(Gpu(int(parts[0]), parts[1], parts[2]))
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and all(v.strip().isdigit() for v in visible.split(",") if v.strip()):
        wanted = [int(v) for v in visible.split(",") if v.strip()]
        found = [g for g in found if g.index in wanted]
    return tuple(found)


def arch_list(backend: str) -> str:
    """TORCH_CUDA_ARCH_LIST for this host's GPUs (build only for what will run it); '' on the CPU."""
    if backend != "cuda":
        return ""
    return os.environ.get("TORCH_CUDA_ARCH_LIST") or ";".join(sorted({g.arch for g in gpus()}))


def gpu_name(backend: str) -> str:
    if backend != "cuda":
        return "cpu"
    found = gpus()
    return found[0].name if found else "unknown"
