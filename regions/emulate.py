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
A launch shape's kernel (its launch names a block and a grid) runs as the GPU would run it, one block
after another: the block's threads are host threads that meet at a barrier for __syncthreads, its
__shared__ arrays the kernel's statics, atomicAdd a locked add; the tests judge the framework's shapes so.
"""

from __future__ import annotations

import contextlib
import functools
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace

from evaluator.problem import ProblemError, module_sizes, problem_from_source, shrink_problem
from regions.check import Checked
from regions.contract import Contract, render
from regions.model import Region, RegionError
from regions.narrowed import narrowed_regions
from regions.offering import cut
from regions.reduce import LONG_SUM
from regions.skeleton import kernel_params
from regions.trace import trace_source

CAPS = (16, 32, 64)  # module-level sizes capped for the emulation, tried in turn
_NUMBER = re.compile(r"\b\d+(?:\.\d+)?(?:e[+-]?\d+)?f?\b")
OWN_SIZE = 1 << 22  # a region costing at most this (bytes moved, or flops) is emulated at its own size
TWIN_SIZE = 1 << 28  # a shrunk twin costing more (sizes the shrink could not reach) is not emulated
TIMEOUT_S = 60.0
LONG_KEEP = 2 * LONG_SUM  # a long axis's length in a twin that keeps it long

# CUDA's qualifiers defined away and what the host lacks of its math: every emulation's
_HOST_COMMON = r"""#include <cmath>
#include <cstdint>
#include <cfloat>
#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__
static inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
"""
# a grid-stride kernel (a first contract) as one block of one thread
_HOST_PRELUDE = (
    _HOST_COMMON
    + r"""struct kg_dim3 { int64_t x; };
static const kg_dim3 blockIdx{0}, threadIdx{0}, blockDim{1}, gridDim{1};
"""
)
# A launch of blocks (a launch shape's "block" and "grid"): each block's threads run as host threads that
# meet at a barrier for __syncthreads, its __shared__ arrays are the kernel's statics (one block at a time)
_BLOCKS_PRELUDE = (
    _HOST_COMMON
    + r"""#include <algorithm>
#include <barrier>
#include <mutex>
#include <thread>
#include <vector>
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
struct kg_dim3 { int64_t x, y, z; };
static kg_dim3 blockIdx, blockDim, gridDim;
static thread_local kg_dim3 threadIdx;
static std::barrier<>* kg_barrier;
static inline void __syncthreads() { kg_barrier->arrive_and_wait(); }
using std::max, std::min;
static std::mutex kg_atomic;
static inline float atomicAdd(float* at, float value) {
    std::lock_guard<std::mutex> held(kg_atomic);
    const float old = *at;
    *at = old + value;
    return old;
}
template <class F> static void kg_launch(F kernel) {
    const int64_t threads = blockDim.x * blockDim.y * blockDim.z;
    for (int64_t z = 0; z < gridDim.z; ++z)
        for (int64_t y = 0; y < gridDim.y; ++y)
            for (int64_t x = 0; x < gridDim.x; ++x) {
                blockIdx = {x, y, z};
                std::barrier<> barrier(threads);
                kg_barrier = &barrier;
                std::vector<std::thread> block;
                for (int64_t t = 0; t < threads; ++t)
                    block.emplace_back([&kernel, t] {
                        const int64_t x = blockDim.x, xy = blockDim.x * blockDim.y;
                        threadIdx = {t % x, (t / x) % blockDim.y, t / xy};
                        kernel();
                    });
                for (std::thread& thread : block) thread.join();
            }
}
"""
)


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

    source = contract.assemble(body).replace('extern "C" __global__', 'extern "C"')
    blocks = "block" in contract.launch
    payload = {
        "config": EvalConfig(backend="cpu").to_dict(),
        "source": _BLOCKS_PRELUDE + source + _launcher(contract) if blocks else _HOST_PRELUDE + source,
        "kernel": "kg_launched" if blocks else contract.kernel_name,
        "count": contract.launch["count"],
        "zero": bool(contract.launch.get("zero")),
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


def _launcher(contract: Contract) -> str:
    """The host entry of a launch of blocks: the kernel's parameters, its block and grid, every block."""
    params = kernel_params(contract.signature)
    args = ", ".join(p.rsplit(" ", 1)[1] for p in params)
    block, grid = ([*d, 1, 1][:3] for d in (contract.launch["block"], contract.launch["grid"]))
    return (
        f'\nextern "C" void kg_launched({", ".join(params)}) {{\n'
        f"    blockDim = {{{block[0]}, {block[1]}, {block[2]}}};\n"
        f"    gridDim = {{{grid[0]}, {grid[1]}, {grid[2]}}};\n"
        f"    kg_launch([&] {{ {contract.kernel_name}({args}); }});\n}}\n"
    )


def small_twin(source: str, region: Region, ambition: str = "moderate") -> tuple[Region, Contract] | None:
    """(region, contract) to emulate a body written for `region` on: the region itself where it is cheap
    enough to run at its own size on one CPU thread, else the same region in the problem shrunk, cut as
    the ambition cuts. None when no shrink keeps the region as it is: the same id, kind, ops and literals
    (a scale of 1/sqrt(head size) changes with the size, and a body carries the one it was shown) and the
    same skeleton but for its numbers (a product over K > 4096 declares a double `result` the body adds to;
    capped, its skeleton would have a float one for the body to set, so such a twin keeps K long: _shrunk).
    Where no shrink of the problem reaches the region (sizes written into get_inputs or the layers), the
    region narrowed on its own stands in (regions.narrowed). A body that hard-codes a size is
    right only at that size: the region's own size is tried first."""
    contract = render(region)
    if region.cost <= OWN_SIZE:
        return region, contract
    form = _form(contract.head)
    return _twin(source, region.id, _ops(region), form, ambition) or _narrowed(region, form)


def _narrowed(region: Region, form: str) -> tuple[Region, Contract] | None:
    """The region narrowed on its own (regions.narrowed), where no shrink of the problem reaches it: the
    first narrowing within TWIN_SIZE whose skeleton is the region's but for its numbers."""
    for twin in narrowed_regions(region):
        if twin.cost > TWIN_SIZE:
            continue
        try:
            contract = render(twin)
        except RegionError:
            continue
        if _form(contract.head) == form:
            return twin, contract
    return None


def _ops(region: Region) -> tuple[object, ...]:
    return (region.kind, *((s.target, s.args, s.kwargs) for s in region.steps))


def _form(head: str) -> str:
    """A skeleton without its numbers: what a body written for it relies on."""
    return _NUMBER.sub("#", head)


def _shrunk(source: str) -> Iterator[str]:
    """The problem shrunk, smallest first: every size capped (CAPS in turn), then each size past LONG_SUM
    kept long (LONG_KEEP) beside the others at the smallest cap, so that a product or reduction over a long
    axis keeps the double sum its skeleton declares there (a matrix times a vector of 1M terms: 16 rows of
    8192, where capped it had a float one and no twin)."""
    problem = problem_from_source(source)
    for cap in CAPS:
        yield shrink_problem(problem, cap=cap).source
    for name, value in module_sizes(source).items():
        if value > LONG_SUM:
            yield shrink_problem(problem, cap=CAPS[0], **{name: min(value, LONG_KEEP)}).source


@functools.lru_cache(maxsize=64)
def _twin(
    source: str, rid: str, ops: tuple[object, ...], form: str, ambition: str
) -> tuple[Region, Contract] | None:
    for small in _shrunk(source):
        try:
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
