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

from dataclasses import dataclass

from regions.contract import Contract
from regions.model import Region

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
