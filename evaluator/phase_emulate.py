"""Worker phase `emulate`: a region kernel built as host C++ and run on the CPU against its region's PyTorch
lines (the region framework's emulation, regions.emulate, sends the assembled source here, so model-written
code runs only inside an evaluator worker: its own process group, time limit and environment)."""

from __future__ import annotations

import ctypes
import hashlib
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import torch

from evaluator.regions.judge import defined_only, region_inputs, region_reference


def run_emulation(spec: dict[str, Any], config: Any, result: Any) -> None:
    """Worker phase `emulate`: build, run on random signed inputs, compare; the verdict into `result`."""
    region = spec["region"]
    try:
        library = _build(spec["source"])
    except RuntimeError as exc:
        result.update(ok=False, error=f"does not build as host C++: {exc}")
        return
    inputs, scalars = region_inputs(region, 0, torch.device("cpu"))
    expected = region_reference(region, inputs, scalars)
    indices = region["output"]["dtype"] == "int64"  # an index reduction; -1 marks an index never written
    start = 0 if spec.get("zero") else -1 if indices else float("nan")  # a launch that adds into it: 0
    out = torch.full(region["output"]["shape"], start, dtype=expected.dtype)
    args: list[Any] = [ctypes.c_void_p(t.data_ptr()) for t in inputs] + [ctypes.c_void_p(out.data_ptr())]
    args += [ctypes.c_float(v) for v in scalars] + [ctypes.c_int64(spec["count"])]
    getattr(library, spec["kernel"])(*args)
    expected, out = defined_only(expected, out)
    diff = torch.nan_to_num((out - expected).abs(), nan=float("inf"))
    close = torch.isclose(out, expected, atol=spec["atol"], rtol=spec["rtol"])  # equal infinities too
    if bool(close.all()):
        result.update(ok=True, max_abs_err=float(diff.max()) if out.numel() else 0.0)
        return
    flat = int(torch.argmax(diff))
    where = [int(i) for i in torch.unravel_index(torch.tensor(flat), out.shape)]
    got, want = float(out.flatten()[flat]), float(expected.flatten()[flat])
    result.update(
        ok=False, error=f"out{where} is {got:.6g}, PyTorch gives {want:.6g}", max_abs_err=float(diff.max())
    )


def _build(source: str) -> ctypes.CDLL:
    key = hashlib.sha256(source.encode()).hexdigest()[:16]
    folder = Path(tempfile.gettempdir()) / "kg_emulate"
    folder.mkdir(exist_ok=True)
    library = folder / f"{key}.so"
    if not library.exists():
        (folder / f"{key}.cpp").write_text(source)
        done = subprocess.run(
            [
                "c++",
                "-std=c++20",
                "-O1",
                "-pthread",
                "-shared",
                "-fPIC",
                "-o",
                str(library),
                str(folder / f"{key}.cpp"),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        if done.returncode != 0:
            errors = [line for line in done.stderr.splitlines() if "error" in line]
            raise RuntimeError("\n".join(errors[:3]) or done.stderr[-500:])
    return ctypes.CDLL(str(library))
