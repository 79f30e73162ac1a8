"""Emulation: a region kernel run on the CPU, one thread after another, against its PyTorch region.

Model-written code never runs in the caller's process: `emulate` hands the assembled source to an
evaluator worker (its own process group, time limit and environment, as every candidate gets).

No GPU is needed to learn whether a body computes the right numbers: the region's kernel is plain float
math in a grid-stride loop, so the host compiler builds it as C++ (CUDA's qualifiers defined away, one
block of one thread that strides over every element) and it runs on a shrunk problem's real tensors. The
reference values come from the region's own PyTorch lines. A pass says the math is right on small
shapes; it says nothing of speed, races or out-of-range reads at full size, which only the GPU host's
strict verdict judges.
"""

from __future__ import annotations

import ctypes
import hashlib
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from evaluator.regions.contract import Contract
from evaluator.regions.judge import region_inputs, region_reference
from evaluator.regions.model import Region

_HOST_PRELUDE = r"""#include <cmath>
#include <cstdint>
#include <cfloat>
#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__
struct kg_dim3 { int64_t x; };
static const kg_dim3 blockIdx{0}, threadIdx{0}, blockDim{1}, gridDim{1};
static inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
"""


@dataclass
class Emulated:
    ok: bool
    error: str = ""  # why it did not run or where it differs
    max_abs_err: float = 0.0


def emulate(
    region: Region,
    contract: Contract,
    body: str,
    timeout_s: float = 60.0,
    atol: float = 1e-4,
    rtol: float = 1e-4,
) -> Emulated:
    """Build the assembled kernel for the host and run it against PyTorch, in an isolated worker."""
    from evaluator import sandbox
    from evaluator.config import EvalConfig

    payload = {
        "config": EvalConfig(backend="cpu").to_dict(),
        "source": _HOST_PRELUDE + contract.assemble(body).replace('extern "C" __global__', 'extern "C"'),
        "kernel": contract.kernel_name,
        "count": contract.launch["count"],
        "region": region.to_dict(),
        "atol": atol,
        "rtol": rtol,
    }
    run = sandbox.run_worker("emulate", payload, timeout_s, {"CUDA_VISIBLE_DEVICES": ""})
    result = run.result or {}
    if run.timed_out:
        return Emulated(False, f"did not finish within {timeout_s:.0f} s (an endless loop?)")
    if "ok" not in result:
        return Emulated(
            False, result.get("error") or f"the emulation crashed ({run.signal_name or run.returncode})"
        )
    return Emulated(bool(result["ok"]), result.get("error", ""), float(result.get("max_abs_err", 0.0)))


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
    out = torch.full(region["output"]["shape"], float("nan"), dtype=torch.float32)
    args: list[Any] = [ctypes.c_void_p(t.data_ptr()) for t in inputs] + [ctypes.c_void_p(out.data_ptr())]
    args += [ctypes.c_float(v) for v in scalars] + [ctypes.c_int64(spec["count"])]
    getattr(library, spec["kernel"])(*args)
    diff = torch.nan_to_num((out - expected).abs(), nan=float("inf"))
    if torch.allclose(out, expected, atol=spec["atol"], rtol=spec["rtol"]):
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
            ["c++", "-std=c++17", "-O1", "-shared", "-fPIC", "-o", str(library), str(folder / f"{key}.cpp")],
            capture_output=True,
            text=True,
            timeout=120,
        )
        if done.returncode != 0:
            errors = [line for line in done.stderr.splitlines() if "error" in line]
            raise RuntimeError("\n".join(errors[:3]) or done.stderr[-500:])
    return ctypes.CDLL(str(library))
