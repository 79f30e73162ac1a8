"""The block_fold launch shape: a reduction to one value per row with its fused epilogue, one block a row.

In a fused reduction (regions.reduce, moderate and aggressive ambition) the fold is the framework's and the
body writes only the steps after it, so the framework may fold the row however it likes: here ROW_THREADS
threads fold strided shares of the row and combine them in shared memory, in double (a variance first
combines the row's mean the same way), and thread 0 runs the body on the finished value and stores it.
Where rows are few and long (a training-mode batch norm's variance: 64 channels of 501,760 elements in
level 3's ResNet block) the first contract's one thread per row leaves the GPU nearly idle; split_fold
shares each such row over several blocks (regions.row_parts).
"""

from __future__ import annotations

from regions.epilogue import split
from regions.library import PRELUDE
from regions.model import Region, RegionError
from regions.reduce import FOLDS, SPREAD, correction, fold_code
from regions.row_parts import Partial, gathered, row_blocks, scratch, tree
from regions.rows import rows_of
from regions.skeleton import (
    BODY_MARK,
    Contract,
    c_names,
    facts_text,
    launch_info,
    region_signature,
    role_lines,
)

ROW_THREADS = 256
# How the threads' partial folds combine, by the fold's op (a and b: two partial results)
COMBINE = {
    "torch.sum": "a + b",
    "torch.mean": "a + b",
    "torch.var": "a + b",
    "torch.std": "a + b",
    "torch.prod": "a * b",
    "torch.amax": "fmax(a, b)",
    "torch.max": "fmax(a, b)",
    "torch.amin": "fmin(a, b)",
    "torch.min": "fmin(a, b)",
}


def block_fold(region: Region) -> Contract:
    """The fused reduction with one block per row; RegionError where the region is no fused fold or its
    rows are shorter than a block."""
    return _fold_blocks(region, False)


def split_fold(region: Region) -> Contract:
    """The fused reduction with each row shared by several blocks (regions.row_parts), for rows too few to
    fill the GPU; RegionError where block_fold does not fit or the rows are many or short. A variance
    cannot take the row's mean first across blocks: each thread sums the deviations from the row's first
    element and their squares (in double), and the row's M2 is sum(d^2) - sum(d)^2 / R, one read of the
    row instead of two."""
    return _fold_blocks(region, True)


def _fold_blocks(region: Region, shared: bool) -> Contract:
    step = region.steps[0]
    fold = FOLDS.get(step.target)
    if region.kind != "reduce" or len(region.steps) < 2 or fold is None or step.target not in COMBINE:
        raise RegionError(f"{region.id}: only a fused fold to one value per row has the block_fold shape")
    names = c_names(region)
    core, names, whole = split(region, names, "result" if fold.store == "result" else "reduced")
    x = core.inputs[0]
    layout = rows_of(step, x.shape)
    length, rows = layout.length, layout.rows
    if length < ROW_THREADS:
        raise RegionError(f"{region.id}: rows of {length} elements fill no block of {ROW_THREADS} threads")
    blocks = row_blocks(region.id, rows, length, ROW_THREADS, shared)
    xn = names[x.name]
    kernel = f"region_{region.id}"
    sig = region_signature(kernel, whole.region, names)
    threads, who = blocks.stride, blocks.thread
    share = f"for (int64_t k = {who}; k < R; k += {threads})"
    start = fold.start.removesuffix("f")
    spread = step.target in SPREAD
    divisor = f"    const double spread_divisor = {length - correction(step)}.0;\n" if spread else ""
    mean = ""
    if spread and not shared:
        mean = (
            f"    double kg_sum = 0.0;\n    {share} kg_sum += {xn}(k);\n"
            + _combined("kg_sum", "a + b")
            + "    const float row_mean = (float)(kg_part[0] / R);  // the row's mean\n    __syncthreads();\n"
            + divisor
        )
    if spread and shared:
        partials = [Partial("kg_part", "a + b", "0.0"), Partial("kg_part2", "a + b", "0.0")]
        folded = (
            f"    const float kg_c = {xn}(0);  // the row's first element: each d is x(k) - kg_c\n"
            "    double kg_d = 0.0, kg_dd = 0.0;\n"
            f"    {share} {{\n        const double d = {xn}(k) - kg_c;\n        kg_d += d;\n"
            "        kg_dd += d * d;\n    }\n"
            "    kg_part[kg_t] = kg_d;\n    kg_part2[kg_t] = kg_dd;\n    __syncthreads();\n"
        )
        finish = (
            "        result = kg_part2[0] - kg_part[0] * kg_part[0] / R;  // the row's squared deviations\n"
        )
    else:
        partials = [Partial("kg_part", COMBINE[step.target], start)]
        code = "\n".join(f"    {line}" for line in fold_code(fold, xn, share).splitlines())
        folded = f"    double result = {start};\n{code}\n    kg_part[kg_t] = result;\n    __syncthreads();\n"
        finish = "        result = kg_part[0];  // the row's fold\n"
    where = blocks.index()
    arrays = "".join(f"    __shared__ double {p.array}[{ROW_THREADS}];\n" for p in partials)
    finished = f"        const float reduced = {fold.store};\n" if fold.store != "result" else ""
    scratched = scratch(region.id, rows, blocks.parts, "double", len(partials)) if shared else ""
    head = (
        f"{PRELUDE}\n{scratched}{sig} {{\n"
        f"    const int64_t R = {length};  // the reduced length: k in [0, R)\n"
        + arrays
        + where
        + f"    const int64_t base = {layout.base};\n"
        f"    auto {xn} = [&](int64_t k) -> float {{ return p_{xn}[base + {layout.at('k')}]; }};\n"
        + mean
        + folded
        + tree(partials, "double", ROW_THREADS)
        + (gathered(region.id, blocks.parts, "double", partials, ROW_THREADS) if shared else "")
        + ("    double result;\n" if spread and shared else "")
        + (divisor if shared else "")
        + "    if (kg_t == 0) {\n"
        + finish
        + finished
        + whole.loads
        + whole.todo
        + BODY_MARK
    )
    tail = f"        p_out[i] = {whole.last};\n    }}\n}}\n"
    roles = role_lines(whole.region, names, whole.notes)
    whose = (
        f"{blocks.parts} blocks of {ROW_THREADS} threads share each"
        if shared
        else f"each block of {ROW_THREADS} threads folds one"
    )
    roles.insert(
        0,
        f"- {whose} of {rows} rows of R = {length} elements "
        f"({fold.rule.format(x=xn)}); the framework combines the threads' shares into `result`"
        + (f" and `reduced` is the finished value, {fold.store}" if fold.store != "result" else "")
        + whole.then,
    )
    launch = launch_info(whole.region, kernel, rows) | {
        "block": [ROW_THREADS, 1, 1],
        "grid": blocks.grid(rows),
    }
    contract = Contract(region.id, "reduce", kernel, sig, head, tail, "", launch)
    contract.facts = facts_text(whole.region, names, head, roles)
    contract.reads = whole.reads
    return contract


def _combined(value: str, combine: str) -> str:
    """Every thread's `value` into kg_part[0] (shared memory, double), by `combine` of a and b."""
    return f"    kg_part[kg_t] = {value};\n    __syncthreads();\n" + tree(
        [Partial("kg_part", combine, "")], "double", ROW_THREADS
    )
