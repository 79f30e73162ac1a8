"""The block_index launch shape: an index reduction (argmax, argmin) with a block of threads per row.

On the first contract one thread walks a whole row keeping `best` and `index`: at KernelBench's scale
(1,024 rows of 12,432 elements) that is 1,024 threads on the GPU, 0.06x eager (benchmarks/results/
family_scale/, H100). Here ROW_THREADS threads share each row in strided shares; the body the model wrote
for the row runs unchanged on a thread's share (R its length, x(k) its k-th element, `index` where in the
share its best is), and the framework maps each thread's index to the row's and combines the threads'
(value, index) pairs in shared memory, a tie going to the smaller index: PyTorch returns the first
occurrence.
"""

from __future__ import annotations

from regions.block_fold import ROW_THREADS
from regions.library import PRELUDE
from regions.model import Region, RegionError
from regions.reduce import INDEX_OPS
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


def block_index(region: Region) -> Contract:
    """The index reduction with a block per row; RegionError for other ops, more inputs, or rows shorter
    than a block."""
    step = region.steps[0]
    if region.kind != "reduce" or len(region.steps) != 1 or step.target not in INDEX_OPS:
        raise RegionError(f"{region.id}: only an argmax or argmin has the block_index shape")
    if len(region.inputs) != 1 or region.scalars:
        raise RegionError(f"{region.id}: an index reduction with more than one input keeps a thread a row")
    (x,) = region.inputs
    layout = rows_of(step, x.shape)
    length, rows = layout.length, layout.rows
    if length < ROW_THREADS:
        raise RegionError(f"{region.id}: rows of {length} elements fill no block of {ROW_THREADS} threads")
    start, better, what = INDEX_OPS[step.target]
    names = c_names(region)
    xn = names[x.name]
    kernel = f"region_{region.id}"
    sig = signature_line(kernel, [xn], "out", [], ["n"], "int64_t")
    head = (
        f"{PRELUDE}\n{sig} {{\n    const int64_t R_ALL = {length};  // the whole row\n"
        f"    __shared__ float kg_best[{ROW_THREADS}];\n    __shared__ int64_t kg_at[{ROW_THREADS}];\n"
        "    const int64_t i = blockIdx.x, kg_t = threadIdx.x;  // row i; this thread's share of it\n"
        f"    float kg_value = {start};\n    int64_t kg_index = 0;\n"
        "    if (i < n) {\n"
        f"        const int64_t base = {layout.base};\n"
        f"        const int64_t R = (R_ALL - kg_t + {ROW_THREADS - 1}) / {ROW_THREADS};  // k in [0, R)\n"
        f"        auto {xn} = [&](int64_t k) -> float {{\n"
        f"            return p_{xn}[base + {layout.at(f'(kg_t + k * {ROW_THREADS})')}];\n        }};\n"
        f"        // {step_code(step, names)}, over this thread's share: R of the row's {length} elements\n"
        f"        float best = {start};  // the {what} value so far\n"
        "        int64_t index = 0;  // where it is in this share: the framework maps it to the row\n"
        + BODY_MARK
    )
    tail = (
        f"        kg_value = best;\n        kg_index = kg_t + index * {ROW_THREADS};\n    }}\n"
        "    kg_best[kg_t] = kg_value;\n    kg_at[kg_t] = kg_index;\n    __syncthreads();\n"
        f"    for (int kg_s = {ROW_THREADS // 2}; kg_s > 0; kg_s >>= 1) {{\n"
        "        if (kg_t < kg_s) {  // the better pair; a tie goes to the first occurrence\n"
        "            const float a = kg_best[kg_t], b = kg_best[kg_t + kg_s];\n"
        "            const int64_t ia = kg_at[kg_t], ib = kg_at[kg_t + kg_s];\n"
        f"            if (b {better} a || (b == a && ib < ia)) {{\n"
        "                kg_best[kg_t] = b;\n                kg_at[kg_t] = ib;\n            }\n"
        "        }\n        __syncthreads();\n    }\n"
        "    if (kg_t == 0 && i < n) p_out[i] = kg_at[0];\n}\n"
    )
    roles = role_lines(region, names, {x.name: f" read as {xn}(k), k in [0, R): this thread's share"})
    roles.insert(
        0,
        f"- each block of {ROW_THREADS} threads handles one of {rows} rows of {length} elements; each thread "
        f"keeps `best` and `index` over its share (R elements, read as {xn}(k)) and the framework combines "
        "the threads' pairs",
    )
    launch = launch_info(region, kernel, rows) | {
        "block": [ROW_THREADS, 1, 1],
        "grid": [rows, 1, 1],
        "output_dtype": "int64",
    }
    contract = Contract(region.id, "reduce", kernel, sig, head, tail, "", launch)
    contract.facts = facts_text(region, names, head, roles)
    return contract
