"""The block_row and split_row launch shapes: a reduction to one value per row with a block of threads a
row (or, split_row, several blocks a row, regions.row_parts). Each thread runs the first contract's body
over its own strided share of the row (R is its share's length, x(k) its k-th element) and the framework
combines the threads' results in shared memory by the op's own rule: a sum's, a mean's (the body folds the
share's sum, the framework divides by the whole row), an extremum's, a product's, a logsumexp's (each
share shifted by its own max, the shares combined by the larger exponent), a variance's (the squares taken
about the whole row's mean, which the block computes first, summed in double).
"""

from __future__ import annotations

from regions.block_fold import ROW_THREADS
from regions.library import PRELUDE
from regions.model import Region, RegionError
from regions.reduce import FOLDS, SPREAD, correction
from regions.row_parts import Partial, gathered, row_blocks, scratch, tree
from regions.rows import rows_of
from regions.skeleton import (
    BODY_MARK,
    SET_RESULT,
    Contract,
    c_names,
    facts_text,
    launch_info,
    role_lines,
    signature_line,
    step_code,
)

# How block_row combines the threads' partial results: (identity, combine(a, b), what each thread keeps
# of its `result`, what the row's value is). A mean's body folds its share's sum (the contract's fold), so
# unequal shares weigh right; a logsumexp combines by the larger exponent, each thread's body shifted by its
# share's own `row_max` (the skeleton's, as on the first contract).
_COMBINE: dict[str, tuple[str, str, str, str]] = {
    "torch.sum": ("0.0f", "a + b", "result", "total"),
    "torch.mean": ("0.0f", "a + b", "result", "total / (float)R_ALL"),  # the body folds the sum
    "torch.amax": ("-INFINITY", "fmaxf(a, b)", "result", "total"),
    "torch.max": ("-INFINITY", "fmaxf(a, b)", "result", "total"),
    "torch.amin": ("INFINITY", "fminf(a, b)", "result", "total"),
    "torch.min": ("INFINITY", "fminf(a, b)", "result", "total"),
    "torch.prod": ("1.0f", "a * b", "result", "total"),
    # a variance's shares are squared deviations from the whole row's mean (the block computes it first)
    "torch.var": ("0.0", "a + b", "result", "(float)(total / spread_divisor)"),
    "torch.std": ("0.0", "a + b", "result", "sqrtf((float)(total / spread_divisor))"),
    "torch.logsumexp": (
        "-INFINITY",
        "fmaxf(a, b) == -INFINITY ? -INFINITY "
        ": fmaxf(a, b) + logf(expf(a - fmaxf(a, b)) + expf(b - fmaxf(a, b)))",
        "result",
        "total",
    ),
}


def _share_result(target: str, xn: str) -> str:
    """`result` as the first contract declared it, over this thread's share: a fold starts at its start (a
    variance's sum of squares in double, as there)."""
    fold = FOLDS.get(target)
    if fold is None:
        return f"{SET_RESULT}\n"
    kind, start = ("double", "0.0") if target in SPREAD else ("float", fold.start)
    return f"        {kind} result = {start};  // for each k: {fold.rule.format(x=xn)}\n"


def _block_mean(xn: str, divisor: int) -> str:
    """A variance's statistics before the body: every thread sums its share, the block adds the sums (in
    kg_part, which then holds the threads' results) into the row's mean, as the first contract's."""
    return (
        f"        const double spread_divisor = {divisor}.0;  // R_ALL - correction: the framework divides\n"
        f"        double kg_own = 0.0;\n        for (int64_t k = 0; k < R; ++k) kg_own += {xn}(k);\n"
        "        kg_part[kg_t] = kg_own;\n        __syncthreads();\n"
        + tree([Partial("kg_part", "a + b", "0.0")], "double", ROW_THREADS)
        + "        const float row_mean = (float)(kg_part[0] / R_ALL);  // the row's mean, computed for you\n"
        "        __syncthreads();  // every thread has read it before kg_part takes the results\n"
    )


def _share_max(target: str, xn: str) -> str:
    """A shifted op's `row_max` (a logsumexp's), over this thread's share: the first contract's line."""
    if target != "torch.logsumexp":
        return ""
    return (
        f"        float row_max = -INFINITY;  // the largest {xn}(k) of this share: subtract it before exp\n"
        f"        for (int64_t k = 0; k < R; ++k) row_max = fmaxf(row_max, {xn}(k));\n"
    )


def block_rows(region: Region) -> Contract:
    """The reduction with one block of ROW_THREADS threads per output row; RegionError for row-wise ops,
    reductions without a combine rule, or rows shorter than a block."""
    return _row_blocks(region, False)


def split_rows(region: Region) -> Contract:
    """The block-a-row reduction with each row shared by several blocks (regions.row_parts), for rows too
    few to fill the GPU; RegionError where block_row does not fit or the rows are many or short."""
    return _row_blocks(region, True)


def _row_blocks(region: Region, shared: bool) -> Contract:
    if region.kind != "reduce" or len(region.steps) != 1 or region.steps[0].target not in _COMBINE:
        raise RegionError(f"{region.id}: only a reduction to one value per row has the block_row shape")
    (step,) = region.steps
    x, *rest = region.inputs
    if rest or region.scalars:
        raise RegionError(f"{region.id}: a reduction with more than one input keeps one thread per row")
    layout = rows_of(step, x.shape)
    length, rows = layout.length, layout.rows
    if length < ROW_THREADS:
        raise RegionError(f"{region.id}: rows of {length} elements fill no block of {ROW_THREADS} threads")
    spread = step.target in SPREAD
    if spread and shared:
        raise RegionError(f"{region.id}: a variance's row mean needs its whole row in one block")
    blocks = row_blocks(region.id, rows, length, ROW_THREADS, shared)
    identity, combine, keep, final = _COMBINE[step.target]
    ctype = "double" if spread else "float"
    divisor = length - correction(step) if spread else 0
    if spread and divisor <= 0:
        raise RegionError(f"{region.id}: a variance of {length} elements with this correction is undefined")
    final = final.replace("spread_divisor", f"{divisor}.0")
    names = c_names(region)
    xn = names[x.name]
    kernel = f"region_{region.id}"
    sig = signature_line(kernel, [xn], "out", [], ["n"])
    threads, who = blocks.stride, blocks.thread
    where = blocks.index()
    head = (
        f"{PRELUDE}\n{scratch(region.id, rows, blocks.parts, 'float', 1) if shared else ''}{sig} {{\n"
        f"    const int64_t R_ALL = {length};  // the whole row\n"
        f"    __shared__ {ctype} kg_part[{ROW_THREADS}];\n" + where + f"    {ctype} kg_mine = {identity};\n"
        "    if (i < n) {\n"
        f"        const int64_t base = {layout.base};\n"
        f"        const int64_t R = (R_ALL - {who} + {threads - 1}) / {threads};  // k in [0, R)\n"
        f"        auto {xn} = [&](int64_t k) -> float {{\n"
        f"            return p_{xn}[base + {layout.at(f'({who} + k * {threads})')}];\n        }};\n"
        + (_block_mean(xn, divisor) if spread else _share_max(step.target, xn))
        + f"        // {step_code(step, names)}, over this thread's share: R of the row's {length} elements\n"
        + _share_result(step.target, xn)
        + BODY_MARK
    )
    partial = Partial("kg_part", combine, identity)
    tail = (
        f"        kg_mine = {keep};\n    }}\n    kg_part[kg_t] = kg_mine;\n    __syncthreads();\n"
        + tree([partial], ctype, ROW_THREADS)
        + (gathered(region.id, blocks.parts, "float", [partial], ROW_THREADS) if shared else "")
        + f"    if (kg_t == 0 && i < n) {{\n        const {ctype} total = kg_part[0];\n"
        f"        p_out[i] = {final};\n    }}\n}}\n"
    )
    roles = role_lines(region, names, {x.name: f" read as {xn}(k), k in [0, R): this thread's share"})
    whose = (
        f"{blocks.parts} blocks of {ROW_THREADS} threads share each"
        if shared
        else f"each block of {ROW_THREADS} threads handles one"
    )
    roles.insert(
        0,
        f"- {whose} of {rows} rows of {length} elements; each "
        f"thread computes `result` over its share (R elements, read as {xn}(k)) and the framework combines "
        "the threads' results",
    )
    launch = launch_info(region, kernel, rows) | {"block": [ROW_THREADS, 1, 1], "grid": blocks.grid(rows)}
    contract = Contract(region.id, "reduce", kernel, sig, head, tail, "", launch)
    contract.facts = facts_text(region, names, head, roles)
    return contract
