"""The register-blocked launch shapes of a matmul-family product (regions.shapes offers them), on the
slices of regions.tiles: the first contract's body runs once per output of a thread and k of each staged
slice of K, adding into that output's running sum, or, fused with an epilogue, once per output on the
framework's finished sum.

- blocked (a lone product, outputs of at least one block tile a side): register blocking. A block of
  256 threads owns a 16·T x 16·T output tile and each thread T x T outputs of it, in runs of LANES adjacent
  rows and columns (a run per 16·LANES), so a thread reads each staged run in one 16-byte shared load and
  a warp's loads hit distinct banks; per BLOCK_K-wide slice of K the block stages both operands' tiles,
  then for each k of the slice the body runs once per output of the thread, unrolled, adding its term
  into that output's sum (`result` starts at it), so the compiler keeps the thread's T x T sums and one
  row and column of operands in registers (127 at T = 8: two blocks an SM), fuses each term into its sum,
  and reads each staged value once per slice for T outputs. T is 8, and 4 where K is
  long enough that the sums are kept in double. A linear layer's bias is the framework's, as on the first
  contract: added to each output's sum as it is stored (with split, by the run from k = 0).
- split (blocked products whose output has too few tiles to fill the GPU while K is long, or whose K is
  too long for a float sum): blocked, with K's slices split into equal runs over several blocks per output
  tile, each run short enough for float sums; each block adds its sums into the output, which starts at
  zero (the launch's `zero`), with atomicAdd.
- blocked_fused (a matmul-family product fused with its pointwise epilogue, aggressive ambition): the
  blocked staging, with the sum the framework's (as on the first fused contract): each thread adds the
  staged slices into its outputs' sums, then the body runs once per output on the finished sum. Where K
  is longer than LONG_SUM the sums stay float and T stays 8: each is kept in runs of RUN_SLICES slices,
  and each finished run is added into the output's total, so that no float sum grows past a run. T is 4
  where 8 would leave half of the SMs without a block.
"""

from __future__ import annotations

from regions import epilogue
from regions.contraction import MATMUL, Operands, operands
from regions.library import PRELUDE
from regions.model import Region, RegionError
from regions.reduce import LONG_SUM
from regions.skeleton import (
    BODY_MARK,
    Contract,
    c_names,
    facts_text,
    launch_info,
    region_signature,
    role_lines,
    step_code,
)
from regions.tiles import TILE, blocks, lone_product, slice_body, sliced

BLOCK_K = 8  # the blocked shape's slice of K
PER, PER_LONG = 8, 4  # a thread's outputs a side, with float and with double sums
SPLIT_TARGET = 264  # blocks the split shape aims for (two per SM of an H100 or H200)
# blocked_fused's fewest blocks of 8 x 8 outputs a thread (one per two SMs); fewer run 4 x 4. On the H100
# (benchmarks/results/fill_and_narrow): 4 x 4 was faster at 16-64 such blocks, slower at 128
FILL = SPLIT_TARGET // 4
SPLIT_MIN_K = 2048  # the least of K one split block sums
LANES = 4  # a blocked thread's adjacent rows (and columns): one float4 of a staged slice
RUN_SLICES = 64  # blocked_fused's slices a float run sums where K is long (512 terms of K)


def blocked(region: Region) -> Contract:
    """The region's product with register blocking (see the module's docstring); RegionError where it does
    not apply (not a lone matmul, an output narrower than a block's tile)."""
    return _register_blocked(region, _biased_product(region), 1)


def split(region: Region) -> Contract:
    """The blocked product with K split into equal runs over several blocks per output tile, each block
    adding its run's sums into the zeroed output atomically. Two reasons to split: an output with too few
    tiles to fill the GPU while K is long (level 1's K = 524288 on a 256 x 256 output: 16 blocks on 132
    SMs, 0.02x eager), aiming at SPLIT_TARGET blocks; and K longer than LONG_SUM, split into runs that a
    float sum keeps within the tolerance (the blocked shape sums such K in double, at half the outputs per
    thread). RegionError where neither holds."""
    ops = _biased_product(region)
    tiles = _tiles(ops)
    splits = max(min(SPLIT_TARGET // tiles, ops.k_dim // SPLIT_MIN_K), blocks(ops.k_dim, LONG_SUM))
    if splits < 2:
        raise RegionError(
            f"{region.id}: {tiles} output tiles and K = {ops.k_dim} leave nothing to split K over"
        )
    return _register_blocked(region, ops, splits)


def _tiles(ops: Operands) -> int:
    """The product's output tiles of 8 x 8 outputs a thread: the blocks the blocked shapes launch before
    splitting K or shrinking a thread's outputs."""
    side = TILE * PER
    return ops.batch * blocks(ops.m_rows, side) * blocks(ops.n_cols, side)


def _biased_product(region: Region) -> Operands:
    """A lone product, with or without a linear layer's bias: what the blocked and split shapes serve."""
    return lone_product(region, bias=len(region.inputs) == 3)


def _per(run: int) -> int:
    """Outputs per thread a side for a block summing `run` values of K: double sums take twice the
    registers."""
    return PER_LONG if run > LONG_SUM else PER


def _sum_type(run: int, runs: bool = False) -> str:
    """A thread's sums: double where a block sums more than LONG_SUM values of K, unless blocked_fused keeps
    them in float runs."""
    return "double" if run > LONG_SUM and not runs else "float"


def _register_blocked(region: Region, ops: Operands, splits: int) -> Contract:
    """The blocked contract; with `splits` > 1 each block sums one of `splits` equal runs of K's slices
    and adds its outputs into the zeroed output atomically (blockIdx.z counts batch x splits)."""
    run = blocks(blocks(ops.k_dim, splits), BLOCK_K) * BLOCK_K  # K's values one block sums
    per = _per(run)
    side = TILE * per
    names = c_names(region)
    kernel = f"region_{region.id}"
    sig = region_signature(kernel, region, names)  # a lone product has no scalars
    row, col = owned("kg_ty", "kg_i"), owned("kg_tx", "kg_j")
    output = f"const int64_t m = kg_m0 + {row}, j = kg_j0 + {col};"  # the body sums it, the tail stores it
    head = (
        f"{PRELUDE}\n{sig} {{\n"
        + _staging(region, ops, splits, run, per)
        + f"        #pragma unroll\n        for (int kg_k = 0; kg_k < {BLOCK_K}; ++kg_k) {{\n"
        f"        #pragma unroll\n        for (int kg_i = 0; kg_i < {per}; ++kg_i) {{\n"
        f"        #pragma unroll\n        for (int kg_j = 0; kg_j < {per}; ++kg_j) {{\n"
        f"        {output}\n"
        + slice_body(
            region,
            ops,
            1,
            (f"kg_ta[kg_k + k][{row}]", f"kg_tb[kg_k + k][{col}]"),
            _sum_type(run),
            "kg_total[kg_i][kg_j]",  # one k at a time into each running sum (the module's docstring)
        )
    )
    total = "(float)kg_total[kg_i][kg_j]"
    if len(region.inputs) > 2:  # a linear layer's bias, the framework's: once, by the run from k = 0
        cn = f"p_{names[region.inputs[2].name]}[j]"
        total += f" + (kg_k0 == 0 ? {cn} : 0.0f)" if splits > 1 else f" + {cn}"
    store = (
        f"atomicAdd(&p_out[(bt * M + m) * N + j], {total});"
        if splits > 1
        else f"p_out[(bt * M + m) * N + j] = {total};"
    )
    tail = (
        "        kg_total[kg_i][kg_j] = result;\n        }\n        }\n        }\n"
        "        __syncthreads();\n    }\n"
        f"    #pragma unroll\n    for (int kg_i = 0; kg_i < {per}; ++kg_i)\n"
        f"        #pragma unroll\n        for (int kg_j = 0; kg_j < {per}; ++kg_j) {{\n"
        f"            {output}\n"
        f"            if (m < M && j < N) {store}\n"
        "        }\n}\n"
    )
    who = (
        f"- each thread of a block of {TILE * TILE} computes {per} x {per} output elements, your lines once "
        "for each (row m, column j) and each k of the staged slice, `result` holding that output's sum so far"
    )
    contract = sliced(region, ops, (sig, head, tail), who, 1, ([TILE * TILE, 1, 1], side))
    if splits > 1:
        contract.launch["grid"][2] *= splits
        contract.launch["zero"] = True  # the blocks add into it
    return contract


def blocked_fused(region: Region) -> Contract:
    """A matmul-family product fused with its epilogue (aggressive ambition) on the blocked shape: the
    framework sums each of a thread's outputs over the staged slices (and adds the product's bias), then
    the body writes the epilogue's steps once per output from `result`, as on the first contract, and the
    framework stores the last. RegionError where it does not apply (no fused product, an output narrower
    than a block's tile)."""
    if region.kind != "contraction" or len(region.steps) < 2 or region.steps[0].target not in MATMUL:
        raise RegionError(f"{region.id}: only a product fused with its epilogue has the blocked_fused shape")
    core, names, whole = epilogue.split(region, c_names(region), "result")
    if tuple(core.output.shape) != tuple(region.output.shape):
        raise RegionError(f"{region.id}: an epilogue that reshapes the product keeps one thread an output")
    ops = operands(core, names)
    run = blocks(ops.k_dim, BLOCK_K) * BLOCK_K
    runs = run > LONG_SUM  # float sums kept in runs of RUN_SLICES slices, each added into the totals
    per = PER if _tiles(ops) >= FILL else PER_LONG  # 4 x 4 outputs a thread: four times the blocks
    side = TILE * per
    kernel = f"region_{region.id}"
    sig = region_signature(kernel, region, names)
    row, col = owned("kg_ty", "kg_i"), owned("kg_tx", "kg_j")
    bias = f" + p_{names[core.inputs[2].name]}[j]" if len(core.inputs) > 2 else ""
    head = (
        f"{PRELUDE}\n{sig} {{\n"
        + _staging(core, ops, 1, run, per, runs)
        + framework_sum(BLOCK_K, (per, per), row, col, _flush(per) if runs else "")
        + f"    #pragma unroll\n    for (int kg_i = 0; kg_i < {per}; ++kg_i)\n"
        f"        #pragma unroll\n        for (int kg_j = 0; kg_j < {per}; ++kg_j) {{\n"
        f"            const int64_t m = kg_m0 + {row}, j = kg_j0 + {col};\n"
        "            if (!(m < M && j < N)) continue;\n"
        "            const int64_t i = (bt * M + m) * N + j;  // the output element\n"
        f"        float result = kg_total[kg_i][kg_j]{bias};  // the sum\n"
        f"{whole.loads}        // {step_code(core.steps[0], names)}\n{whole.todo}{BODY_MARK}"
    )
    tail = f"        p_out[i] = {whole.last};\n        }}\n}}\n"
    a, b = core.inputs[:2]
    notes = {a.name: f" read as {names[a.name]}(k)", b.name: f" read as {names[b.name]}(k)", **whole.notes}
    roles = role_lines(region, names, notes)
    roles.insert(
        0,
        f"- each thread of a block of {TILE * TILE} computes {per} x {per} output elements (row m, column j"
        f"{', batch bt' if ops.batch > 1 else ''}): the framework has summed each into `result`{whole.then}",
    )
    launch = launch_info(region, kernel, region.output.numel)
    launch |= {
        "block": [TILE * TILE, 1, 1],
        "grid": [blocks(ops.n_cols, side), blocks(ops.m_rows, side), ops.batch],
    }
    contract = Contract(region.id, "contraction", kernel, sig, head, tail, "", launch)
    contract.facts = facts_text(region, names, head, roles)
    contract.reads = whole.reads
    return contract


def _staging(region: Region, ops: Operands, splits: int, run: int, per: int, runs: bool = False) -> str:
    """The blocked kernel from its sizes to the slice loop's prefetch: the shared tiles, the block's
    corner and run of K, a thread's `per` x `per` sums (with `runs`, float totals and the current run's
    sums), the next slice's registers, and each slice staged."""
    side = TILE * per
    if min(ops.m_rows, ops.n_cols) < side:
        raise RegionError(f"{region.id}: a {ops.m_rows} x {ops.n_cols} output fills no {side} x {side} tile")
    acc = _sum_type(run, runs)
    sums = ("kg_total", "kg_run") if runs else ("kg_total",)
    zero = " ".join(f"{sum_}[kg_i][kg_j] = 0;" for sum_ in sums)
    threads = TILE * TILE
    loads = BLOCK_K * side // threads  # values of each operand a thread stages per slice
    corner = f"kg_m0 = blockIdx.y * {side}, kg_j0 = blockIdx.x * {side}"
    where = (
        f"    const int64_t bt = blockIdx.z / {splits}, {corner};\n"
        f"    const int64_t kg_k0 = (blockIdx.z % {splits}) * {run}, K_END = min(K_ALL, kg_k0 + {run});\n"
        if splits > 1
        else f"    const int64_t bt = blockIdx.z, {corner};\n    const int64_t kg_k0 = 0, K_END = K_ALL;\n"
    )
    # B's tile is staged along k where B is stored (j, k) (a linear layer's weight), else along j, so that
    # consecutive threads read consecutive addresses either way
    b_at, b_slot = (
        (f"j = kg_j0 + kg_r / {BLOCK_K}, k = k0 + kg_r % {BLOCK_K}", f"[kg_r % {BLOCK_K}][kg_r / {BLOCK_K}]")
        if ops.linear
        else (f"k = k0 + kg_r / {side}, j = kg_j0 + kg_r % {side}", f"[kg_r / {side}][kg_r % {side}]")
    )
    each = (
        f"        #pragma unroll\n        for (int kg_q = 0; kg_q < {loads}; ++kg_q) {{\n"
        f"            const int kg_r = threadIdx.x + kg_q * {threads};\n"
    )
    return (
        f"    const int64_t M = {ops.m_rows}, N = {ops.n_cols}, K_ALL = {ops.k_dim};\n"
        f"    __shared__ __align__(16) float kg_ta[{BLOCK_K}][{side + LANES}];\n"
        f"    __shared__ __align__(16) float kg_tb[{BLOCK_K}][{side + LANES}];\n"
        f"    const int kg_tx = threadIdx.x % {TILE}, kg_ty = threadIdx.x / {TILE};\n"
        + where
        + "".join(f"    {acc} {sum_}[{per}][{per}];\n" for sum_ in sums)
        + f"    #pragma unroll\n    for (int kg_i = 0; kg_i < {per}; ++kg_i)\n"
        f"        #pragma unroll\n"
        f"        for (int kg_j = 0; kg_j < {per}; ++kg_j) " + (f"{{ {zero} }}" if runs else zero) + "\n"
        "    // the next slice's values wait in registers while the block computes on this one\n"
        f"    float kg_na[{loads}], kg_nb[{loads}];\n"
        "    auto kg_fetch = [&](int64_t k0) {\n"
        + each
        + f"            {{ const int64_t m = kg_m0 + kg_r / {BLOCK_K}, k = k0 + kg_r % {BLOCK_K};\n"
        f"              kg_na[kg_q] = (m < M && k < K_END) ? {ops.a_at} : 0.0f; }}\n"
        f"            {{ const int64_t {b_at};\n"
        f"              kg_nb[kg_q] = (k < K_END && j < N) ? {ops.b_at} : 0.0f; }}\n"
        "        }\n    };\n"
        "    kg_fetch(kg_k0);\n"
        f"    for (int64_t k0 = kg_k0; k0 < K_END; k0 += {BLOCK_K}) {{\n"
        + each
        + f"            kg_ta[kg_r % {BLOCK_K}][kg_r / {BLOCK_K}] = kg_na[kg_q];\n"
        f"            kg_tb{b_slot} = kg_nb[kg_q];\n"
        "        }\n"
        "        __syncthreads();\n"
        f"        if (k0 + {BLOCK_K} < K_END) kg_fetch(k0 + {BLOCK_K});\n"
    )


def framework_sum(width: int, per: tuple[int, int], row: str, col: str, flush: str = "") -> str:
    """A fused product's slice on a blocked shape: the framework adds the slice's `width` products into
    the thread's per[0] x per[1] sums (each staged value read once for the thread's outputs), then closes
    the slice loop; with `flush` (_flush's lines), into the run's sums, which `flush` adds into the
    totals."""
    per_m, per_n = per
    into = "kg_run" if flush else "kg_total"
    return (
        f"        #pragma unroll\n        for (int kg_k = 0; kg_k < {width}; ++kg_k) {{\n"
        f"            float kg_a[{per_m}], kg_c[{per_n}];\n"
        f"            #pragma unroll\n            for (int kg_i = 0; kg_i < {per_m}; ++kg_i) "
        f"kg_a[kg_i] = kg_ta[kg_k][{row}];\n"
        f"            #pragma unroll\n            for (int kg_j = 0; kg_j < {per_n}; ++kg_j) "
        f"kg_c[kg_j] = kg_tb[kg_k][{col}];\n"
        f"            #pragma unroll\n            for (int kg_i = 0; kg_i < {per_m}; ++kg_i)\n"
        f"                #pragma unroll\n                for (int kg_j = 0; kg_j < {per_n}; ++kg_j) "
        f"{into}[kg_i][kg_j] += kg_a[kg_i] * kg_c[kg_j];\n"
        f"        }}\n{flush}        __syncthreads();\n    }}\n"
    )


def _flush(per: int) -> str:
    """After a slice: where the run has RUN_SLICES slices, or K ends, its sums are added into the totals
    and the next run starts at zero."""
    return (
        f"        if ((k0 - kg_k0) / {BLOCK_K} % {RUN_SLICES} == {RUN_SLICES - 1}"
        f" || k0 + {BLOCK_K} >= K_END) {{\n"
        f"            #pragma unroll\n            for (int kg_i = 0; kg_i < {per}; ++kg_i)\n"
        f"                #pragma unroll\n                for (int kg_j = 0; kg_j < {per}; ++kg_j) {{\n"
        "                    kg_total[kg_i][kg_j] += kg_run[kg_i][kg_j];\n"
        "                    kg_run[kg_i][kg_j] = 0;\n"
        "                }\n        }\n"
    )


def owned(thread: str, index: str, threads: int = TILE) -> str:
    """The offset in its block's tile of a thread's `index`-th row (or column), `threads` threads along it:
    runs of LANES adjacent ones, a run per threads * LANES, so that a thread reads each slice's run in one
    16-byte shared load."""
    return f"{LANES} * {thread} + {index} % {LANES} + {threads * LANES} * ({index} / {LANES})"
