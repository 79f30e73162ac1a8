"""The each_row launch shape: a row-wise reduction (softmax, log_softmax, layer_norm: the body writes out(k)
for one k, the statistics and the loop over k are the framework's) with several threads per row.

On the first contract one thread walks a whole row three times (the statistics, then out(k)): a level-1
softmax of 16 rows of 16,384 runs on 16 threads, and level 2's layer norm over rows of 64 contiguous
elements has every lane of a warp read a different row. Here a warp (rows under WIDE elements) or a block
(longer rows) takes a row; its threads read strided shares of it, so a warp's loads are one contiguous
run, combine the row's statistics in shared memory (in double, as the first contract sums them), and each
writes out(k) for its own k. The body moves here unchanged: it reads the same names (row_max and row_sum,
or row_mean and row_rstd) and writes one element. Only rows whose elements are contiguous get the shape
(a softmax over channels reads along a stride: one thread a row keeps a warp's loads contiguous there).
"""

from __future__ import annotations

from regions.library import PRELUDE
from regions.model import Region, RegionError, Step
from regions.reduce import EACH, NORMALIZED, STANDARDIZED
from regions.row_parts import Partial, tree
from regions.rows import rows_of
from regions.skeleton import (
    BODY_MARK,
    Contract,
    c_names,
    facts_text,
    launch_info,
    role_lines,
    signature_line,
    step_code,
)

BLOCK = 256  # threads a block
WIDE = 1024  # rows of at least this many elements take a block each, shorter ones a warp
WARP = 32


def each_row(region: Region) -> Contract:
    """The row-wise reduction with a warp or a block per row; RegionError for other reductions and for
    rows whose elements are not contiguous."""
    step = region.steps[0]
    if region.kind != "reduce" or len(region.steps) != 1 or step.target not in EACH:
        raise RegionError(f"{region.id}: only a softmax, log_softmax or layer_norm has the each_row shape")
    x, *params = region.inputs
    layout = rows_of(step, x.shape)
    length, rows = layout.length, layout.rows
    if layout.strides != ((length, 1),):
        raise RegionError(f"{region.id}: its rows' elements are not contiguous: one thread a row reads them")
    threads = BLOCK if length >= WIDE else WARP
    per_block = BLOCK // threads
    names = c_names(region)
    xn = names[x.name]
    kernel = f"region_{region.id}"
    sig = signature_line(kernel, [names[t.name] for t in region.inputs], "out", [], ["n"])
    share = f"if (kg_row) for (int64_t k = kg_t; k < R; k += {threads})"
    accessors = [f"    auto {xn} = [&](int64_t k) -> float {{ return p_{xn}[base + k]; }};"]
    accessors += [
        f"    auto {names[t.name]} = [&](int64_t k) -> float {{ return p_{names[t.name]}[k]; }};"
        for t in params
    ]
    accessors.append("    auto out = [&](int64_t k) -> float& { return p_out[base + k]; };")
    head = (
        f"{PRELUDE}\n{sig} {{\n    const int64_t R = {length};  // the reduced length: k in [0, R)\n"
        f"    __shared__ double kg_part[{per_block}][{threads}];\n"
        f"    const int64_t kg_t = threadIdx.x, i = blockIdx.x * {per_block} + threadIdx.y;  // row i; this "
        "thread's share of it\n"
        "    const bool kg_row = i < n;\n"
        f"    const int64_t base = kg_row ? {layout.base} : 0;\n"
        + "\n".join(accessors)
        + "\n"
        + _statistics(step, xn, share, threads)
        + f"    // {step_code(step, names)}\n"
        f"    {share} {{  // the framework's loop: write out(k) for this k\n" + BODY_MARK
    )
    tail = "    }\n}\n"
    roles = role_lines(region, names, {x.name: f" read as {xn}(k), k in [0, R) along the reduced dims"})
    who = "a warp" if threads == WARP else "a block"
    roles.insert(
        0,
        f"- {who} of {threads} threads handles each of {rows} rows of R = {length} elements; the framework "
        "computes the row's statistics and loops over this thread's k: write out(k) for this k",
    )
    launch = launch_info(region, kernel, rows)
    launch |= {"block": [threads, per_block, 1], "grid": [-(-rows // per_block), 1, 1]}
    contract = Contract(region.id, "reduce", kernel, sig, head, tail, "", launch)
    contract.facts = facts_text(region, names, head, roles)
    return contract


def _statistics(step: Step, xn: str, share: str, threads: int) -> str:
    """The row's statistics under the names the first contract gives them, each combined over the row's
    threads (the last read of the shared array is fenced before the next combine writes it)."""
    if step.target in NORMALIZED:
        return (
            _combined("-INFINITY", f"{share} kg_v = fmax(kg_v, (double){xn}(k));", "fmax(a, b)", threads)
            + "    const float row_max = (float)kg_part[threadIdx.y][0];  // the row's largest value\n"
            "    __syncthreads();\n"
            + _combined("0.0", f"{share} kg_v += expf({xn}(k) - row_max);", "a + b", threads)
            + "    const float row_sum = (float)kg_part[threadIdx.y][0];  // sum of expf(x(k) - row_max)\n"
        )
    if step.target in STANDARDIZED:
        eps = float(dict(step.kwargs).get("eps", 1e-5))
        squares = f"{share} {{\n        const double d = {xn}(k) - row_mean;\n        kg_v += d * d;\n    }}"
        return (
            _combined("0.0", f"{share} kg_v += {xn}(k);", "a + b", threads)
            + "    const float row_mean = (float)(kg_part[threadIdx.y][0] / R);  // the row's mean\n"
            "    __syncthreads();\n"
            + _combined("0.0", squares, "a + b", threads)
            + f"    const float row_rstd = rsqrtf((float)(kg_part[threadIdx.y][0] / R) + {eps!r}f);  "
            "// 1/sqrt(var+eps)\n"
        )
    raise RegionError(f"{step.target} has no statistics of the each_row shape")


def _combined(start: str, loop: str, combine: str, threads: int) -> str:
    """A value over this thread's share (`loop` folds it into kg_v), combined over the row's threads into
    kg_part[threadIdx.y][0]."""
    return (
        f"    {{\n    double kg_v = {start};\n    {loop}\n    kg_part[threadIdx.y][kg_t] = kg_v;\n    }}\n"
        "    __syncthreads();\n" + tree([Partial("kg_part[threadIdx.y]", combine, start)], "double", threads)
    )
