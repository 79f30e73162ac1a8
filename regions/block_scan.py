"""The block_scan launch shape: a scan (cumsum, cumprod) with a block of threads per row.

On the first contract one thread carries a whole row in order: a cumsum of 128 rows of 32,768 elements
runs on 128 threads. Here ROW_THREADS threads share each row in contiguous chunks, in two passes over the
body the model wrote for the whole row: first each thread runs it over its chunk from the op's start value
with its writes sent to a sink, which leaves the chunk's total in `carry`; the framework scans the totals
(thread 0, in order, by the op's rule) into each chunk's starting carry; then each thread runs the body
again from that carry, writing out(k). The body reads the names it read on its first contract (R, x(k),
out(k), carry), so it moves here unchanged. A scan's sums add in a different order than one thread's (the
chunks' totals first), as PyTorch's own parallel scan of a contiguous row does, and in double: at
KernelBench's scale PyTorch's float32 scan is within atol of the exact one where a different float order
is not (a masked cumsum of 9,600 signed terms: 2.7e-4 off the reference in float, strict in double;
benchmarks/results/family_scale/, H100, 2026-12-06). Along a strided dim PyTorch carries one float in
order, as the first contract does (the same loop); a chunked scan there is more accurate than that
reference and lands outside KernelBench's atol (a 6000-term cumsum, H100, 2026-12-06), so strided rows
keep the first contract.
"""

from __future__ import annotations

from regions.block_fold import ROW_THREADS
from regions.library import PRELUDE
from regions.model import Region, RegionError
from regions.reduce import SCAN
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

MIN_CHUNK = 8  # the least elements a thread's chunk holds: shorter rows keep one thread a row
_RULE = {"torch.cumsum": "kg_run + kg_here", "torch.cumprod": "kg_run * kg_here"}


def block_scan(region: Region) -> Contract:
    """The scan with a block per row; RegionError for other ops and for rows under ROW_THREADS x MIN_CHUNK
    elements."""
    step = region.steps[0]
    if region.kind != "reduce" or len(region.steps) != 1 or step.target not in SCAN:
        raise RegionError(f"{region.id}: only a cumsum or cumprod has the block_scan shape")
    (x,) = region.inputs
    layout = rows_of(step, x.shape)
    length, rows = layout.length, layout.rows
    if length < ROW_THREADS * MIN_CHUNK:
        raise RegionError(f"{region.id}: rows of {length} elements are too short to share over a block")
    if layout.strides[-1][1] != 1:
        raise RegionError(f"{region.id}: a strided row keeps one thread: PyTorch's scan sums it in order")
    start, what = SCAN[step.target]
    names = c_names(region)
    xn = names[x.name]
    kernel = f"region_{region.id}"
    sig = signature_line(kernel, [xn], "out", [], ["n"])
    at = layout.at("(kg_c0 + k)")
    head = (
        f"{PRELUDE}\n{sig} {{\n    const int64_t R_ALL = {length};  // the whole row\n"
        f"    __shared__ double kg_total[{ROW_THREADS}];\n"
        "    const int64_t i = blockIdx.x, kg_t = threadIdx.x;  // row i; this thread's chunk of it\n"
        f"    const int64_t kg_chunk = (R_ALL + {ROW_THREADS - 1}) / {ROW_THREADS};\n"
        "    const int64_t kg_c0 = kg_t * kg_chunk < R_ALL ? kg_t * kg_chunk : R_ALL;\n"
        "    const int64_t R = kg_chunk < R_ALL - kg_c0 ? kg_chunk : R_ALL - kg_c0;  // k in [0, R)\n"
        f"    const int64_t base = {layout.base};\n"
        f"    auto {xn} = [&](int64_t k) -> float {{ return p_{xn}[base + {at}]; }};\n"
        "    // the body, run twice: for the chunk's total (writes to a sink), then from the chunk's carry\n"
        "    auto kg_scan = [&](double carry, bool kg_store) -> double {\n"
        "        float kg_sink = 0.0f;\n"
        "        auto out = [&](int64_t k) -> float& {\n"
        f"            return kg_store ? p_out[base + {at}] : kg_sink;\n        }};\n"
        f"        // {step_code(step, names)}: carry starts at this chunk's running {what}\n" + BODY_MARK
    )
    tail = (
        "        return carry;\n    };\n"
        f"    kg_total[kg_t] = kg_scan({start}, false);\n    __syncthreads();\n"
        "    if (kg_t == 0) {  // each chunk's starting carry: the totals of the chunks before it, in order\n"
        f"        double kg_run = {start};\n"
        f"        for (int kg_j = 0; kg_j < {ROW_THREADS}; ++kg_j) {{\n"
        "            const double kg_here = kg_total[kg_j];\n"
        f"            kg_total[kg_j] = kg_run;\n            kg_run = {_RULE[step.target]};\n"
        "        }\n    }\n    __syncthreads();\n    kg_scan(kg_total[kg_t], true);\n}\n"
    )
    roles = role_lines(region, names, {x.name: f" read as {xn}(k), k in [0, R): this thread's chunk"})
    roles.insert(
        0,
        f"- a block of {ROW_THREADS} threads shares each of {rows} rows of {length} elements in contiguous "
        f"chunks of R elements; `carry` starts at the running {what} of the chunks before, write out(k) "
        "for every k in [0, R) in order",
    )
    launch = launch_info(region, kernel, rows) | {"block": [ROW_THREADS, 1, 1], "grid": [rows, 1, 1]}
    contract = Contract(region.id, "reduce", kernel, sig, head, tail, "", launch)
    contract.facts = facts_text(region, names, head, roles)
    return contract
