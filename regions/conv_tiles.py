"""The blocked shape of a convolution (regions.shapes offers it): the convolution as an implicit matrix
product, register-blocked as regions.tiles blocks the matmul family (Inductor and cuDNN's implicit GEMM).

Rows are the output channels of one group (M), columns the output's (batch, position) pairs (N), and K
the group's input channels times the filter's taps. A block of THREADS threads owns a tile of 16·PM rows
by 16·PER columns, each thread PM x PER outputs of it in registers; per slice of K the block stages the
filter's values and the input under the taps (0 in the padding, as the first contract's accessor reads
it) in shared memory, the next slice prefetched into registers. A slice is CB whole input channels with
all of their taps, so a body written on the first contract (a sum over c in [0, C) and the taps, through
x(c, k...) and w(c, k...)) runs unchanged on it with C = CB, once per output of the thread, and the
framework adds the slices; a bias the body adds is read as its value in the first slice and 0 after.
Fused with its epilogue (aggressive ambition), the sum is the framework's and the body runs once per
output on the finished sum, as on the first contract. Groups are the grid's third dimension.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from regions.contraction import CONV, ConvGeometry, conv_geometry
from regions.epilogue import Epilogue, split
from regions.library import PRELUDE
from regions.model import Region, RegionError
from regions.skeleton import (
    BODY_MARK,
    SET_RESULT,
    Contract,
    c_names,
    facts_text,
    launch_info,
    region_signature,
    role_lines,
    step_code,
)
from regions.tiles import LANES, PER, TILE, blocks, owned

THREADS = TILE * TILE
SIDE_N = TILE * PER  # the columns a block owns
MIN_ROWS = 32  # fewer output channels a group leave most of a block's rows idle: one thread an output
SLICE = 8  # the least K values one slice stages
SHARED_FLOATS = 12 * 1024  # 48 KiB of static shared memory
# a bias read in the first slice alone: the body adds it to every slice's sum
_FIRST_ONLY = (
    "struct kg_first_slice {  // a bias as the body reads it: its values in K's first slice, 0 after\n"
    "    const float* p;\n    bool first;\n"
    "    __device__ float operator[](int64_t k) const { return first ? p[k] : 0.0f; }\n};\n"
)


@dataclass(frozen=True)
class _Tile:
    """How the implicit product is cut: M rows (output channels a group) by N columns ((batch, position)
    pairs), K = channels x taps in slices of `width` (`per_slice` whole channels), a thread's `per_m` x
    PER outputs in a block's `side_m` x SIDE_N tile."""

    rows: int
    cols: int
    positions: int
    taps: int
    per_m: int
    side_m: int
    per_slice: int
    width: int
    k_all: int


def _tile(region: Region, geo: ConvGeometry) -> _Tile:
    positions, taps = prod(geo.spatial_out), prod(geo.taps)
    rows, cols = geo.per_group, region.steps[0].out.shape[0] * positions
    per_m = PER if rows >= TILE * PER else LANES
    side_m = TILE * per_m
    if rows < MIN_ROWS or cols < SIDE_N:
        raise RegionError(
            f"{region.id}: {rows} output channels a group by {cols} outputs fill no block's tile"
        )
    per_slice = min(geo.channels, -(-SLICE // taps))
    width = per_slice * taps
    if width * (side_m + LANES + SIDE_N + LANES) > SHARED_FLOATS:
        raise RegionError(f"{region.id}: a slice of {width} taps does not fit in shared memory")
    return _Tile(rows, cols, positions, taps, per_m, side_m, per_slice, width, geo.channels * taps)


def conv_blocked(region: Region) -> Contract:
    """The region's convolution (alone, or fused with its epilogue) as a register-blocked implicit
    product; RegionError where it does not fit (no convolution, too few output channels a group or
    outputs, a slice too wide for shared memory)."""
    if region.kind != "contraction" or region.steps[0].target not in CONV:
        raise RegionError(f"{region.id}: only a convolution has the conv_blocked shape")
    names = c_names(region)
    fused = len(region.steps) > 1
    core, names, whole = split(region, names, "result") if fused else (region, names, Epilogue(region))
    geo = conv_geometry(core)
    tile = _tile(region, geo)
    x, w, *bias = core.inputs
    xn, wn = names[x.name], names[w.name]
    kernel = f"region_{region.id}"
    sig = region_signature(kernel, whole.region, names)
    dims = range(geo.dims)
    row, col = owned("kg_ty", "kg_i"), owned("kg_tx", "kg_j")
    ks = ", ".join(f"int64_t k{j}" for j in dims)
    tap_args = ", ".join(f"k{j}" for j in dims)
    head = f"{PRELUDE}\n{_FIRST_ONLY if bias and not fused else ''}{sig} {{\n" + _staging(geo, tile, xn, wn)
    output = (
        f"const int64_t m = kg_m0 + {row}, j = kg_j0 + {col};\n"
        f"            const int64_t o = kg_g * M + m;  // the output channel\n"
    )
    at = tile.positions
    place_out = f"((j / {at}) * {core.output.shape[1]} + o) * {at} + j % {at}"
    each = (
        f"    #pragma unroll\n    for (int kg_i = 0; kg_i < {tile.per_m}; ++kg_i)\n"
        f"        #pragma unroll\n        for (int kg_j = 0; kg_j < {PER}; ++kg_j) {{\n"
        f"            {output}"
    )
    if fused:  # the framework sums; the body runs once per output on the sum
        start = f" + p_{names[bias[0].name]}[o]" if bias else ""
        head += (
            _framework_sum(tile, row, col) + each + "            if (m >= M || j >= N) continue;\n"
            f"            const int64_t i = {place_out};  // the output element\n"
            f"        float result = kg_total[kg_i][kg_j]{start};  // the sum\n"
            f"{whole.loads}        // {step_code(core.steps[0], names)}\n{whole.todo}{BODY_MARK}"
        )
        tail = f"        p_out[i] = {whole.last};\n        }}\n}}\n"
    else:  # the body sums one slice of whole channels, once per output of the thread
        flat = "c"
        for j in dims:
            flat = f"({flat}) * K{j} + k{j}"
        bias_line = ""
        if bias:
            bn = names[bias[0].name]
            bias_line = (
                f"        const kg_first_slice {bn}{{p_{bn}, kg_k0 == 0}};  // {bn}[o]: channel o's bias\n"
            )
        head += (
            f"        #pragma unroll\n        for (int kg_i = 0; kg_i < {tile.per_m}; ++kg_i) {{\n"
            f"        #pragma unroll\n        for (int kg_j = 0; kg_j < {PER}; ++kg_j) {{\n"
            f"        {output}"
            f"        const int64_t C = {tile.per_slice};  // this slice's channels: c in [0, C)\n"
            f"        auto {xn} = [&](int64_t c, {ks}) -> float {{ return kg_tb[{flat}][{col}]; }};\n"
            f"        auto {wn} = [&](int64_t c, {ks}) -> float {{ return kg_ta[{flat}][{row}]; }};\n"
            + bias_line
            + f"        // {step_code(core.steps[0], names)}\n"
            + f"{SET_RESULT}: the sum over this slice\n{BODY_MARK}"
        )
        tail = (
            "        kg_total[kg_i][kg_j] += result;\n        }\n        }\n        __syncthreads();\n    }\n"
            + each
            + f"            if (m < M && j < N) p_out[{place_out}] = kg_total[kg_i][kg_j];\n"
            "        }\n}\n"
        )
    notes = {
        x.name: f" read as {xn}(c, {tap_args}): the input under tap k of this output, 0 in the padding",
        w.name: f" read as {wn}(c, {tap_args})",
        **whole.notes,
    }
    roles = role_lines(whole.region, names, notes)
    who = f"- each thread of a block of {THREADS} computes {tile.per_m} x {PER} outputs (channel o, column j)"
    roles.insert(
        0,
        f"{who}: the framework has summed each into `result`{whole.then}"
        if fused
        else f"{who}, your lines once for each: `result`: the sum over c in [0, C) and the taps of a slice, "
        f"C = {tile.per_slice} of the {geo.channels} input channels; the framework adds the slices",
    )
    launch = launch_info(whole.region, kernel, whole.region.output.numel)
    grid = [blocks(tile.cols, SIDE_N), blocks(tile.rows, tile.side_m), geo.groups]
    launch |= {"block": [THREADS, 1, 1], "grid": grid}
    contract = Contract(region.id, "contraction", kernel, sig, head, tail, "", launch)
    contract.facts = facts_text(whole.region, names, head, roles)
    contract.reads = whole.reads
    return contract


def _staging(geo: ConvGeometry, tile: _Tile, xn: str, wn: str) -> str:
    """The kernel from its sizes to the slice loop's prefetch: the shared tiles, where this thread's
    staged column sits, how a filter value and an input value under a tap are read, the registers of the
    sums and of the next slice, and each slice staged."""
    dims = range(geo.dims)
    width, side_m, k_all, rows, taps = tile.width, tile.side_m, tile.k_all, tile.rows, tile.taps
    tap_loops = ", ".join(f"K{j} = {geo.taps[j]}" for j in dims)
    # the column this thread stages (its batch and output position) is the same in every slice
    column = [f"    const int64_t kg_sj = kg_j0 + threadIdx.x % {SIDE_N};", "    int64_t kg_rest = kg_sj;"]
    for j in reversed(dims):
        column.append(
            f"    const int64_t kg_p{j} = kg_rest % {geo.spatial_out[j]}; kg_rest /= {geo.spatial_out[j]};"
        )
    column.append("    const int64_t kg_b = kg_rest;")
    place, inside, at = geo.placed("kg_p", "k")
    group_x = f"kg_g * {geo.channels} + " if geo.groups > 1 else ""
    unflat = [f"const int64_t c = kg_k / {taps};", f"int64_t kg_t = kg_k % {taps};"]
    for j in reversed(dims):
        unflat.append(f"const int64_t k{j} = kg_t % {geo.taps[j]}; kg_t /= {geo.taps[j]};")
    if geo.transposed:  # w[in channel, out channel within the group, taps...]
        w_at = f"p_{wn}[(({group_x}c) * {rows} + m) * {taps} + kg_k % {taps}]"
        w_lines = f"const int64_t c = kg_k / {taps}; return {w_at};"
    else:  # w[out channel, in channel of its group, taps...]: K is contiguous
        w_lines = f"return p_{wn}[(kg_g * {rows} + m) * {k_all} + kg_k];"
    loads_a = -(-width * side_m // THREADS)
    passes = THREADS // SIDE_N  # the rows of the input's tile one pass of the block stages
    loads_b = -(-width // passes)
    return (
        f"    const int64_t M = {rows}, N = {tile.cols}, K_ALL = {k_all};  // M channels a group, N (batch, "
        "position) pairs, K channels x taps\n"
        f"    const int64_t {tap_loops};\n"
        f"    __shared__ __align__(16) float kg_ta[{width}][{side_m + LANES}];\n"
        f"    __shared__ __align__(16) float kg_tb[{width}][{SIDE_N + LANES}];\n"
        f"    const int kg_tx = threadIdx.x % {TILE}, kg_ty = threadIdx.x / {TILE};\n"
        f"    const int64_t kg_g = blockIdx.z, kg_m0 = blockIdx.y * {side_m},"
        f" kg_j0 = blockIdx.x * {SIDE_N};\n"
        + "\n".join(column)
        + "\n    // the input under flat tap kg_k (channel x taps) of this thread's column, 0 off the edges\n"
        f"    auto kg_x = [&](int64_t kg_k) -> float {{\n        {' '.join(unflat)}\n"
        f"        {' '.join(place)}\n"
        f"        return ({inside}) ? p_{xn}[{geo.x_index('kg_b', f'{group_x}c', at)}] : 0.0f;\n    }};\n"
        f"    auto kg_w = [&](int64_t m, int64_t kg_k) -> float {{ {w_lines} }};\n"
        f"    float kg_total[{tile.per_m}][{PER}];\n"
        f"    #pragma unroll\n    for (int kg_i = 0; kg_i < {tile.per_m}; ++kg_i)\n"
        f"        #pragma unroll\n        for (int kg_j = 0; kg_j < {PER}; ++kg_j)"
        " kg_total[kg_i][kg_j] = 0.0f;\n"
        "    // the next slice's values wait in registers while the block computes on this one\n"
        f"    float kg_na[{loads_a}], kg_nb[{loads_b}];\n"
        f"    auto kg_fetch = [&](int64_t kg_k0) {{\n"
        f"        #pragma unroll\n        for (int kg_q = 0; kg_q < {loads_a}; ++kg_q) {{\n"
        f"            const int kg_r = threadIdx.x + kg_q * {THREADS};\n"
        f"            const int64_t m = kg_m0 + kg_r / {width}, kg_k = kg_k0 + kg_r % {width};\n"
        f"            kg_na[kg_q] = (kg_r < {width * side_m} && m < M && kg_k < K_ALL)"
        " ? kg_w(m, kg_k) : 0.0f;\n"
        "        }\n"
        f"        #pragma unroll\n        for (int kg_q = 0; kg_q < {loads_b}; ++kg_q) {{\n"
        f"            const int kg_r = threadIdx.x / {SIDE_N} + kg_q * {passes};\n"
        f"            const int64_t kg_k = kg_k0 + kg_r;\n"
        f"            kg_nb[kg_q] = (kg_r < {width} && kg_k < K_ALL && kg_sj < N) ? kg_x(kg_k) : 0.0f;\n"
        "        }\n    };\n"
        "    kg_fetch(0);\n"
        f"    for (int64_t kg_k0 = 0; kg_k0 < K_ALL; kg_k0 += {width}) {{\n"
        f"        #pragma unroll\n        for (int kg_q = 0; kg_q < {loads_a}; ++kg_q) {{\n"
        f"            const int kg_r = threadIdx.x + kg_q * {THREADS};\n"
        f"            if (kg_r < {width * side_m}) kg_ta[kg_r % {width}][kg_r / {width}] = kg_na[kg_q];\n"
        "        }\n"
        f"        #pragma unroll\n        for (int kg_q = 0; kg_q < {loads_b}; ++kg_q) {{\n"
        f"            const int kg_r = threadIdx.x / {SIDE_N} + kg_q * {passes};\n"
        f"            if (kg_r < {width}) kg_tb[kg_r][threadIdx.x % {SIDE_N}] = kg_nb[kg_q];\n"
        "        }\n"
        "        __syncthreads();\n"
        f"        if (kg_k0 + {width} < K_ALL) kg_fetch(kg_k0 + {width});\n"
    )


def _framework_sum(tile: _Tile, row: str, col: str) -> str:
    """A fused convolution's slice: the framework adds the slice's products into the thread's sums, then
    closes the slice loop."""
    return (
        f"        #pragma unroll\n        for (int kg_k = 0; kg_k < {tile.width}; ++kg_k) {{\n"
        f"            float kg_a[{tile.per_m}], kg_c[{PER}];\n"
        f"            #pragma unroll\n            for (int kg_i = 0; kg_i < {tile.per_m}; ++kg_i) "
        f"kg_a[kg_i] = kg_ta[kg_k][{row}];\n"
        f"            #pragma unroll\n            for (int kg_j = 0; kg_j < {PER}; ++kg_j) "
        f"kg_c[kg_j] = kg_tb[kg_k][{col}];\n"
        f"            #pragma unroll\n            for (int kg_i = 0; kg_i < {tile.per_m}; ++kg_i)\n"
        f"                #pragma unroll\n                for (int kg_j = 0; kg_j < {PER}; ++kg_j) "
        "kg_total[kg_i][kg_j] += kg_a[kg_i] * kg_c[kg_j];\n"
        "        }\n        __syncthreads();\n    }\n"
    )
