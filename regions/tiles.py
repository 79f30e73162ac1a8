"""The slice shapes of a lone matmul-family product (regions.shapes offers them), and what every product
shape shares: the first contract's body, which adds every term over k in [0, K) to `result` through the
accessors (result holds the sum so far and is never set), runs unchanged on one slice of K at a time
while the framework stages the slices and adds them, or keeps each output's running sum in `result`. The
register-blocked shapes (blocked, split, blocked_fused) build on these in regions.blocked_tiles.

- tiled (a lone matmul-family product): 2-D blocks of TILE x TILE threads with shared-memory tiles; for
  each TILE-wide slice of K the framework loads a tile of A and of B, the body sums that slice (K = TILE,
  the accessors reading the tiles) and the framework adds the slices.
- dot (products whose output is under a tile wide, a matrix times a vector): one block per output
  element; each thread sums a strided share of K (K is its share's length) and the block adds the shares.
"""

from __future__ import annotations

from regions.contraction import MATMUL, Operands, operands
from regions.library import PRELUDE
from regions.model import Region, RegionError
from regions.reduce import LONG_SUM
from regions.skeleton import (
    BODY_MARK,
    Contract,
    add_result,
    c_names,
    facts_text,
    launch_info,
    role_lines,
    signature_line,
    step_code,
)

TILE = 16
DOT_THREADS = 256


def tiled(region: Region) -> Contract:
    """The region's product on TILE x TILE blocks with shared-memory tiles; RegionError where it does not
    apply (not a lone matmul, a bias, an output narrower than a tile)."""
    ops = lone_product(region)
    names = c_names(region)
    if min(ops.m_rows, ops.n_cols) < TILE:
        raise RegionError(f"{region.id}: a {ops.m_rows} x {ops.n_cols} output fills no {TILE} x {TILE} tile")
    a, b = region.inputs
    an, bn = names[a.name], names[b.name]
    kernel = f"region_{region.id}"
    sig = signature_line(kernel, [an, bn], "out", [], ["n"])
    acc = "double" if ops.k_dim > LONG_SUM else "float"
    head = (
        f"{PRELUDE}\n{sig} {{\n"
        f"    const int64_t M = {ops.m_rows}, N = {ops.n_cols}, K_ALL = {ops.k_dim};\n"
        f"    __shared__ float tile_a[{TILE}][{TILE + 1}];\n"
        f"    __shared__ float tile_b[{TILE}][{TILE + 1}];\n"
        f"    const int64_t ty = threadIdx.y, tx = threadIdx.x, bt = blockIdx.z;\n"
        f"    const int64_t m = blockIdx.y * {TILE} + ty, j = blockIdx.x * {TILE} + tx;\n"
        f"    {acc} total = 0;\n"
        f"    for (int64_t k0 = 0; k0 < K_ALL; k0 += {TILE}) {{\n"
        f"        {{\n"
        f"            const int64_t k = k0 + tx;\n"
        f"            tile_a[ty][tx] = (m < M && k < K_ALL) ? {ops.a_at} : 0.0f;\n"
        f"        }}\n"
        f"        {{\n"
        f"            const int64_t k = k0 + ty;\n"
        f"            tile_b[ty][tx] = (k < K_ALL && j < N) ? {ops.b_at} : 0.0f;\n"
        f"        }}\n"
        f"        __syncthreads();\n"
        f"        {{\n" + slice_body(region, ops, TILE, ("tile_a[ty][k]", "tile_b[k][tx]"))
    )
    tail = (
        "        total += result;\n        }\n        __syncthreads();\n    }\n"
        "    if (m < M && j < N) p_out[(bt * M + m) * N + j] = (float)total;\n}\n"
    )
    who = f"- each thread of a {TILE} x {TILE} block computes one output element (row m, column j)"
    return sliced(region, ops, (sig, head, tail), who, TILE, ([TILE, TILE, 1], TILE))


def dot(region: Region) -> Contract:
    """The product with one block of DOT_THREADS threads per output element: each thread sums a strided
    share of K (consecutive threads read consecutive k) and the block adds the shares in double. For
    outputs a few columns wide and K long (a matrix times a vector: 2048 outputs of 1M terms each), where
    one thread per output reads its row alone. RegionError for outputs a tile wide, or K under a block."""
    ops = lone_product(region)
    if ops.n_cols >= TILE or ops.k_dim < DOT_THREADS:
        raise RegionError(
            f"{region.id}: an output {ops.n_cols} columns wide with K = {ops.k_dim} is no dot product's shape"
        )
    names = c_names(region)
    a, b = region.inputs
    an, bn = names[a.name], names[b.name]
    kernel = f"region_{region.id}"
    sig = signature_line(kernel, [an, bn], "out", [], ["n"])
    share = f"kg_t + k * {DOT_THREADS}"
    wide = ops.k_dim > LONG_SUM
    head = (
        f"{PRELUDE}\n{sig} {{\n"
        f"    const int64_t M = {ops.m_rows}, N = {ops.n_cols}, K_ALL = {ops.k_dim};\n"
        f"    __shared__ double kg_part[{DOT_THREADS}];\n"
        "    const int64_t kg_t = threadIdx.x, i = blockIdx.x;  // output element i; this thread's share\n"
        "    const int64_t j = i % N, m = (i / N) % M, bt = i / (N * M);\n"
        f"    const int64_t K = (K_ALL - kg_t + {DOT_THREADS - 1}) / {DOT_THREADS};  // k in [0, K)\n"
        f"    auto kg_a = [&](int64_t k) -> float {{ return {ops.a_at}; }};\n"
        f"    auto kg_b = [&](int64_t k) -> float {{ return {ops.b_at}; }};\n"
        f"    auto {an} = [&](int64_t k) -> float {{ return kg_a({share}); }};  // {an}[.., m, {share}]\n"
        f"    auto {bn} = [&](int64_t k) -> float {{ return kg_b({share}); }};  // "
        + (f"{bn}[j, {share}]" if ops.linear else f"{bn}[.., {share}, j]")
        + f"\n    // {step_code(region.steps[0], names)}, over this thread's share of k\n"
        + add_result("double" if wide else "float", "of this share")
        + BODY_MARK
    )
    tail = (
        "    kg_part[kg_t] = result;\n    __syncthreads();\n"
        f"    for (int kg_s = {DOT_THREADS // 2}; kg_s > 0; kg_s >>= 1) {{\n"
        "        if (kg_t < kg_s) kg_part[kg_t] += kg_part[kg_t + kg_s];\n"
        "        __syncthreads();\n    }\n"
        "    if (kg_t == 0) p_out[i] = (float)kg_part[0];\n}\n"
    )
    roles = role_lines(region, names, {a.name: f" read as {an}(k)", b.name: f" read as {bn}(k)"})
    roles.insert(
        0,
        f"- each block of {DOT_THREADS} threads computes one output element (row m, column j); each thread "
        f"sums its share of k as `result`, K = its share's length of the {ops.k_dim}, and the framework "
        "adds the shares",
    )
    count = region.output.numel
    launch = launch_info(region, kernel, count) | {"block": [DOT_THREADS, 1, 1], "grid": [count, 1, 1]}
    contract = Contract(region.id, "contraction", kernel, sig, head, tail, "", launch)
    contract.facts = facts_text(region, names, head, roles)
    return contract


def sliced(
    region: Region,
    ops: Operands,
    code: tuple[str, str, str],
    who: str,
    width: int,
    launch_by: tuple[list[int], int],
) -> Contract:
    """A product shape's contract: the body sums one `width`-wide slice of K, the framework adds them;
    `launch_by` is the block and the side of the output tile one block covers."""
    sig, head, tail = code
    names = c_names(region)
    a, b, *bias = region.inputs
    an, bn = names[a.name], names[b.name]
    notes = {a.name: f" read as {an}(k)", b.name: f" read as {bn}(k)"}
    if bias:
        notes[bias[0].name] = " (the framework adds it to the sum: leave it out)"
    roles = role_lines(region, names, notes)
    roles.insert(
        0,
        f"{who}: add every term of one slice, k in [0, K), K = {width}, to `result` (never set it); the "
        f"framework adds the {ops.k_dim} / {width} slices",
    )
    block, side = launch_by
    kernel = f"region_{region.id}"
    launch = launch_info(region, kernel, region.output.numel)
    launch |= {"block": block, "grid": [blocks(ops.n_cols, side), blocks(ops.m_rows, side), ops.batch]}
    contract = Contract(region.id, "contraction", kernel, sig, head, tail, "", launch)
    contract.facts = facts_text(region, names, head, roles)
    if bias:  # the bias is the framework's: the body reads the operands alone
        contract.reads = [an, bn]
    return contract


def lone_product(region: Region, bias: bool = False) -> Operands:
    """The operands of a lone matmul-family product: what the product shapes serve; a linear layer's bias
    only where `bias` (the blocked shapes add it as they store)."""
    if region.kind != "contraction" or len(region.steps) != 1 or region.steps[0].target not in MATMUL:
        raise RegionError(f"{region.id}: only a lone matmul-family product has a tiled or blocked shape")
    if len(region.inputs) != 2 + bias or region.scalars:
        raise RegionError(f"{region.id}: a product with a bias keeps one thread per element on this shape")
    return operands(region, c_names(region))


def slice_body(
    region: Region,
    ops: Operands,
    width: int,
    reads: tuple[str, str],
    kind: str = "float",
    start: str | None = None,
) -> str:
    """The head's last lines on a product shape: the slice's K, the operands read from where the shape
    staged them (`reads`: C expressions over k), the step, and `result`, which the body adds the slice's
    terms to as it did on the first contract: a `kind` from `start` (0 where none is given, else the
    output's sum so far where the framework keeps it in registers)."""
    names = c_names(region)
    a, b = region.inputs[:2]
    an, bn = names[a.name], names[b.name]
    return (
        f"        const int64_t K = {width};  // this slice of K: k in [0, K)\n"
        f"        auto {an} = [&](int64_t k) -> float {{ return {reads[0]}; }};  // {an}[.., m, k0 + k]\n"
        f"        auto {bn} = [&](int64_t k) -> float {{ return {reads[1]}; }};  // "
        + (f"{bn}[j, k0 + k]" if ops.linear else f"{bn}[.., k0 + k, j]")
        + f"\n        // {step_code(region.steps[0], names)}\n"
        + add_result(kind, "of this slice", start)
        + BODY_MARK
    )


def blocks(count: int, per: int) -> int:
    """How many blocks of `per` cover `count`."""
    return (count + per - 1) // per
