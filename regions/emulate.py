"""Emulation: a region kernel run on the CPU, one thread after another, against its PyTorch region.

Model-written code never runs in the caller's process: `emulate` hands the assembled source to an
evaluator worker (its own process group, time limit and environment, as every candidate gets).

No GPU is needed to learn whether a body computes the right numbers: the region's kernel is plain float
math in a grid-stride loop, so the host compiler builds it as C++ (CUDA's qualifiers defined away, one
block of one thread that strides over every element) and it runs on real tensors of the region's shapes,
or of its twin in the problem shrunk (`small_twin`). The reference values come from the region's own
PyTorch lines. A pass says the math is right on those shapes; it says nothing of speed, races, long-sum
precision or out-of-range reads at full size, which only the GPU host's strict verdict judges. The graph's
local checks call `judged_on_cpu` after NVRTC, so a wrong body is repaired before any GPU sees it.
"""

from __future__ import annotations

import contextlib
import functools
import io
import re
from dataclasses import dataclass, replace

from evaluator.problem import ProblemError, problem_from_source, shrink_problem
from regions.check import Checked
from regions.contract import Contract, render
from regions.model import Region, RegionError
from regions.offering import cut
from regions.trace import trace_source

CAPS = (16, 32, 64)  # module-level sizes capped for the emulation, tried in turn
_NUMBER = re.compile(r"\b\d+(?:\.\d+)?(?:e[+-]?\d+)?f?\b")
OWN_SIZE = 1 << 22  # a region costing at most this (bytes moved, or flops) is emulated at its own size
TWIN_SIZE = 1 << 28  # a shrunk twin costing more (sizes the shrink could not reach) is not emulated
TIMEOUT_S = 60.0

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


def small_twin(source: str, region: Region, ambition: str = "moderate") -> tuple[Region, Contract] | None:
    """(region, contract) to emulate a body written for `region` on: the region itself where it is cheap
    enough to run at its own size on one CPU thread, else the same region in the problem shrunk, cut as
    the ambition cuts. None when no shrink keeps the region as it is: the same id, kind, ops and literals
    (a scale of 1/sqrt(head size) changes with the size, and a body carries the one it was shown) and the
    same skeleton but for its numbers (a product over K > 4096 declares a double `result` the body adds to;
    shrunk, its skeleton has a float one for the body to set, and the body would read garbage).
    A body that hard-codes a size is right only at that size: the region's own size is tried first."""
    contract = render(region)
    if region.cost <= OWN_SIZE:
        return region, contract
    return _twin(source, region.id, _ops(region), _form(contract.head), ambition)


def _ops(region: Region) -> tuple[object, ...]:
    return (region.kind, *((s.target, s.args, s.kwargs) for s in region.steps))


def _form(head: str) -> str:
    """A skeleton without its numbers: what a body written for it relies on."""
    return _NUMBER.sub("#", head)


@functools.lru_cache(maxsize=64)
def _twin(
    source: str, rid: str, ops: tuple[object, ...], form: str, ambition: str
) -> tuple[Region, Contract] | None:
    for cap in CAPS:
        try:
            small = shrink_problem(problem_from_source(source), cap=cap).source
            with contextlib.redirect_stderr(io.StringIO()):  # fx's shape propagation prints what it raises
                traced = trace_source(small)
            for twin in cut(traced, "aggressive" if ambition == "aggressive" else "moderate"):
                if (twin.id, _ops(twin)) == (rid, ops) and twin.cost <= TWIN_SIZE:
                    contract = render(twin)
                    if _form(contract.head) == form:
                        return twin, contract
        except (RegionError, ProblemError):
            continue
    return None


def wrong_on_cpu(twin: tuple[Region, Contract], body: str) -> str | None:
    """What the emulation finds wrong with a body, in its words: the first wrong element (`out[...] is x,
    PyTorch gives y`), or that it never finishes or dies of a signal; "" when it computes the right values;
    None when it cannot judge the body here (the host compiler cannot build it, or the worker fails for a
    reason of its own). The graph's local checks and the agreement benchmark judge by this one rule."""
    got = emulate(*twin, body, timeout_s=TIMEOUT_S)
    if got.ok:
        return ""
    if got.error.startswith(("out[", "did not finish", "the emulation crashed (SIG")):  # not an exit status
        return got.error
    return None


def judged_on_cpu(result: Checked, twin: tuple[Region, Contract] | None) -> Checked:
    """The local checks' verdict with the emulation's: a body that compiles but computes wrong values on
    its region or twin (or never finishes, or dies of a signal) fails here with where, so a repair round
    sees it before any GPU does. Measured on the H200: a family task's wrong mean passed lint and NVRTC and
    was judged wrong three rounds running. What the emulation cannot judge passes as it was."""
    if not result.ok or twin is None:
        return result
    wrong = wrong_on_cpu(twin, result.body)
    if not wrong:
        return result
    if wrong.startswith("out["):
        message = f"it compiles, but run on the CPU against PyTorch it computes wrong values: {wrong}"
    else:
        message = f"it compiles, but run on the CPU it {wrong.replace('the emulation ', '')}"
    finding = {"code": "wrong_values", "message": message, "line": None}
    return replace(result, ok=False, lint=[*result.lint, finding], errors=f"- {message}")
