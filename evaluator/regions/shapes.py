"""Launch shapes beyond one thread per output element, for the fast second.

A product's first contract runs one thread per output element, each reading its whole row of A and column
of B from global memory: correct, and 0.10-0.22x of cuBLAS on the shared matmuls. The tiled shape runs
the same body on 2-D blocks of TILE x TILE threads with shared-memory tiles: for each TILE-wide slice of
K the framework loads a tile of A and of B, then the body the model wrote for the first contract (a sum
over k in [0, K) of A(k) * B(k) into `result`) runs with K = TILE and the accessors reading the tiles, and
the framework adds the slices. So a correct body needs no rewrite to move to the faster shape, and a new
body is written against the same names. Products with a bias (added once per slice, it would be counted
K / TILE times) or an epilogue keep one thread per element.
"""

from __future__ import annotations

import re

from evaluator.regions.contract import _MATMUL, LONG_SUM, Contract, operands
from evaluator.regions.library import PRELUDE
from evaluator.regions.model import Region, RegionError
from evaluator.regions.skeleton import (
    BODY_MARK,
    c_names,
    facts_text,
    launch_info,
    role_lines,
    signature_line,
    step_code,
)

TILE = 16
TILED = "tiled"  # the shape's name in a candidate's record of which regions run on which shape
_MEMORY = re.compile(r"\bp_\w+")  # the kernel's pointers: p_out, p_A, ...


def moves_to_tiles(body: str) -> bool:
    """Whether a first contract's body can run per slice unchanged: only if it reads through the
    accessors and sets `result`. A body that also touches memory itself (`p_out[m * N + j] = result;`,
    harmless once per element) would do so once per slice, and from the edge tiles' idle threads too."""
    return _MEMORY.search(body) is None


def tiled(region: Region) -> Contract:
    """The region's product on TILE x TILE blocks with shared-memory tiles; RegionError where it does not
    apply (not a lone matmul, a bias, an output narrower than a tile)."""
    if region.kind != "contraction" or len(region.steps) != 1 or region.steps[0].target not in _MATMUL:
        raise RegionError(f"{region.id}: only a lone matmul-family product has a tiled shape")
    if len(region.inputs) != 2 or region.scalars:
        raise RegionError(f"{region.id}: a product with a bias keeps one thread per element")
    names = c_names(region)
    ops = operands(region, names)
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
        f"        {{\n"
        f"        const int64_t K = {TILE};  // this slice of K: k in [0, K)\n"
        f"        auto {an} = [&](int64_t k) -> float {{ return tile_a[ty][k]; }};  // {an}[.., m, k0 + k]\n"
        f"        auto {bn} = [&](int64_t k) -> float {{ return tile_b[k][tx]; }};  // "
        + (f"{bn}[j, k0 + k]" if ops.linear else f"{bn}[.., k0 + k, j]")
        + f"\n        // {step_code(region.steps[0], names)}\n"
        + "        float result;  // set it: the sum over this slice\n"
        f"{BODY_MARK}"
    )
    tail = (
        "        total += result;\n        }\n        __syncthreads();\n    }\n"
        "    if (m < M && j < N) p_out[(bt * M + m) * N + j] = (float)total;\n}\n"
    )
    roles = role_lines(region, names, {a.name: f" read as {an}(k)", b.name: f" read as {bn}(k)"})
    roles.insert(
        0,
        f"- each thread of a {TILE} x {TILE} block computes one output element (row m, column j): "
        f"`result` is the sum over k in [0, K) of one slice, K = {TILE}; the framework adds the "
        f"{ops.k_dim} / {TILE} slices",
    )
    launch = launch_info(region, kernel, region.output.numel)
    tiles = lambda d: (d + TILE - 1) // TILE  # noqa: E731
    launch |= {"block": [TILE, TILE, 1], "grid": [tiles(ops.n_cols), tiles(ops.m_rows), ops.batch]}
    contract = Contract(region.id, "contraction", kernel, sig, head, tail, "", launch)
    contract.facts = facts_text(region, names, head, roles)
    return contract
