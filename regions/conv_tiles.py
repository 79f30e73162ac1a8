"""The blocked shape of a convolution (regions.shapes offers it): the convolution as an implicit matrix
product, register-blocked as regions.blocked_tiles blocks the matmul family (Inductor and cuDNN's
implicit GEMM).

Rows are the output channels of one group (M), columns the output's (batch, position) pairs (N), and K
the group's input channels times the filter's taps. A block of THREADS threads owns a tile of 16·PM rows
by 16·PER columns, each thread PM x PER outputs of it in registers (with 32 output channels or fewer,
a narrow tile: 4 outputs a thread along the rows, the fewest rows of threads that cover them, and the
other threads along 256 columns, so no row is idle); per slice of K the block stages the
filter's values and the input under the taps (0 in the padding, as the first contract's accessor reads
it) in shared memory, the next slice prefetched into registers. Where each staged value sits is worked
out once per thread, before the slices: a slice adds only its first channel's offset, so the slice loop
divides nothing. A slice is CB whole input channels with all of their taps, so a body written on the
first contract (a sum over c in [0, C) and the taps, through x(c, k...) and w(c, k...)) runs unchanged on
it with C = CB, once per output of the thread, and the framework adds the slices; a bias the body adds is
read as its value in the first slice and 0 after. Fused with its epilogue (aggressive ambition), the sum
is the framework's and the body runs once per output on the finished sum, as on the first contract.
Groups are the grid's third dimension.

A transposed convolution with a stride (and dilation 1) scatters each input onto every s-th output, so an
output reads only the taps of its phase, (position + padding) mod s: its outputs split by phase, a phase a
block, and K holds the phase's taps alone (a filter of 4 with stride 2 sums 2 taps a dimension, not 4 of
which 2 read 0). The body's tap loops run to the phase's count; x and w read that phase's taps.
"""

from __future__ import annotations

from math import prod

from regions.blocked_tiles import LANES, framework_sum, owned
from regions.contraction import CONV, ConvGeometry, conv_geometry
from regions.conv_cut import THREADS, Tile, conv_tile
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
from regions.tiles import blocks

# a bias read in the first slice alone: the body adds it to every slice's sum
_FIRST_ONLY = (
    "struct kg_first_slice {  // a bias as the body reads it: its values in K's first slice, 0 after\n"
    "    const float* p;\n    bool first;\n"
    "    __device__ float operator[](int64_t k) const { return first ? p[k] : 0.0f; }\n};\n"
)



def conv_blocked(region: Region) -> Contract:
    """The region's convolution (alone, or fused with its epilogue) as a register-blocked implicit
    product; RegionError where it does not fit (no convolution, too few output channels a group or
    outputs, a slice too wide for shared memory, sizes past 32-bit offsets)."""
    if region.kind != "contraction" or region.steps[0].target not in CONV:
        raise RegionError(f"{region.id}: only a convolution has the conv_blocked shape")
    names = c_names(region)
    fused = len(region.steps) > 1
    core, names, whole = split(region, names, "result") if fused else (region, names, Epilogue(region))
    geo = conv_geometry(core)
    tile = conv_tile(region, geo)
    x, w, *bias = core.inputs
    xn, wn = names[x.name], names[w.name]
    kernel = f"region_{region.id}"
    sig = region_signature(kernel, whole.region, names)
    dims = range(geo.dims)
    row, col = owned("kg_ty", "kg_i", THREADS // tile.threads_n), owned("kg_tx", "kg_j", tile.threads_n)
    ks = ", ".join(f"int64_t k{j}" for j in dims)
    tap_args = ", ".join(f"k{j}" for j in dims)
    head = f"{PRELUDE}\n{_FIRST_ONLY if bias and not fused else ''}{sig} {{\n" + _staging(geo, tile, xn, wn)
    place, inside, out_at = _output_place(geo, tile, core.output.shape[1])
    output = (
        f"const int64_t m = kg_m0 + {row}, j = kg_j0 + {col};\n"
        f"            const int64_t o = kg_g * M + m;  // the output channel\n"
        f"{place}"
    )
    each = (
        f"    #pragma unroll\n    for (int kg_i = 0; kg_i < {tile.per_m}; ++kg_i)\n"
        f"        #pragma unroll\n        for (int kg_j = 0; kg_j < {tile.per_n}; ++kg_j) {{\n"
        f"            {output}"
    )
    if fused:  # the framework sums; the body runs once per output on the sum
        start = f" + p_{names[bias[0].name]}[o]" if bias else ""
        head += (
            framework_sum(tile.width, (tile.per_m, tile.per_n), row, col)
            + each
            + f"            if (!({inside})) continue;\n"
            f"            const int64_t i = {out_at};  // the output element\n"
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
                f"        const kg_first_slice {bn}{{p_{bn}, kg_c0 == 0}};  // {bn}[o]: channel o's bias\n"
            )
        head += (
            f"        #pragma unroll\n        for (int kg_i = 0; kg_i < {tile.per_m}; ++kg_i) {{\n"
            f"        #pragma unroll\n        for (int kg_j = 0; kg_j < {tile.per_n}; ++kg_j) {{\n"
            f"        const int64_t m = kg_m0 + {row}, j = kg_j0 + {col};\n"
            f"        const int64_t o = kg_g * M + m;  // the output channel\n"
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
            + f"            if ({inside}) p_out[{out_at}] = kg_total[kg_i][kg_j];\n"
            "        }\n}\n"
        )
    notes = {
        x.name: f" read as {xn}(c, {tap_args}): the input under tap k of this output, 0 in the padding",
        w.name: f" read as {wn}(c, {tap_args})",
        **whole.notes,
    }
    roles = role_lines(whole.region, names, notes)
    who = (
        f"- each thread of a block of {THREADS} computes {tile.per_m} x {tile.per_n} outputs "
        "(channel o, column j)"
    )
    phase = (
        f"; the outputs split by the stride's phase, each reading {tile.taps} of the filter's "
        f"{prod(geo.taps)} taps (K{'..' if geo.dims > 1 else ''} count a phase's taps)"
        if tile.phases.split
        else ""
    )
    roles.insert(
        0,
        f"{who}: the framework has summed each into `result`{whole.then}"
        if fused
        else f"{who}, your lines once for each: `result`: the sum over c in [0, C) and the taps of a slice, "
        f"C = {tile.per_slice} of the {geo.channels} input channels; the framework adds the slices{phase}",
    )
    launch = launch_info(whole.region, kernel, whole.region.output.numel)
    grid = [blocks(tile.cols, tile.side_n), blocks(tile.rows, tile.side_m), geo.groups * tile.phases.count]
    launch |= {"block": [THREADS, 1, 1], "grid": grid}
    contract = Contract(region.id, "contraction", kernel, sig, head, tail, "", launch)
    contract.facts = facts_text(whole.region, names, head, roles)
    contract.reads = whole.reads
    return contract


def _position(tile: Tile, column: str, pre: str) -> list[str]:
    """Lines that place `column` (a (batch, position) pair of this block's phase): its batch `pre`b and
    output position `pre`p0, `pre`p1, ..."""
    ph = tile.phases
    lines = [f"int64_t {pre}rest = {column};"]
    for j in reversed(range(len(ph.positions))):
        step = f"kg_first{j} + {ph.stride[j]} * " if ph.split else ""
        lines.append(
            f"const int64_t {pre}p{j} = {step}({pre}rest % {ph.positions[j]});"
            f" {pre}rest /= {ph.positions[j]};"
        )
    lines.append(f"const int64_t {pre}b = {pre}rest;")
    return lines


def _output_place(geo: ConvGeometry, tile: Tile, channels_out: int) -> tuple[str, str, str]:
    """The lines that place output column j, the test that (m, j) is an output, and its flat index."""
    if not tile.phases.split:  # the columns are the output's positions in order
        at = prod(geo.spatial_out)
        return "", "m < M && j < N", f"((j / {at}) * {channels_out} + o) * {at} + j % {at}"
    lines = "".join(f"            {line}\n" for line in _position(tile, "j", "kg_o"))
    inside = " && ".join(["m < M", "j < N", *(f"kg_op{d} < {o}" for d, o in enumerate(geo.spatial_out))])
    index = f"kg_ob * {channels_out} + o"
    for d, o in enumerate(geo.spatial_out):
        index = f"({index}) * {o} + kg_op{d}"
    return lines, inside, index


def _constant_rows(geo: ConvGeometry, tile: Tile) -> list[str]:
    """A convolution without padding, each thread staging every row of a slice for its column: the column's
    first input (kg_xs, -1 past the last column) and each row's offset from it (kg_dx, numbers a fully
    unrolled fetch folds into its loads) instead of an offset a row in registers."""
    inner = [prod(geo.spatial_in[j + 1 :]) for j in range(geo.dims)]
    deltas = []
    for r in range(tile.width):
        c, t = divmod(r, tile.taps)
        delta = c * prod(geo.spatial_in)
        for j in reversed(range(geo.dims)):
            t, k = divmod(t, geo.taps[j])
            delta += k * geo.dilation[j] * inner[j]
        deltas.append(str(delta))
    first = " + ".join(f"kg_sp{j} * {geo.stride[j] * inner[j]}" for j in range(geo.dims))
    return [
        f"    constexpr int kg_dx[{tile.width}] = {{{', '.join(deltas)}}};  // each row's offset",
        f"    const int kg_xs = kg_sj < N ? int({first}) : -1;  // the column's first input, -1: none",
    ]


def _staging(geo: ConvGeometry, tile: Tile, xn: str, wn: str) -> str:
    """The kernel from its sizes to the slice loop's prefetch: the shared tiles, the phase, where each
    value this thread stages sits (once: a slice adds its first channel's offset), the registers of the
    sums and of the next slice, and each slice staged."""
    dims = range(geo.dims)
    ph = tile.phases
    width, side_m, side_n, rows, taps = tile.width, tile.side_m, tile.side_n, tile.rows, tile.taps
    filter_taps, plane = prod(geo.taps), prod(geo.spatial_in)
    tap_loops = ", ".join(f"K{j} = {ph.taps[j]}" for j in dims)
    lines = [
        f"    const int64_t M = {rows}, N = {tile.cols};  // M channels a group, N (batch, position) pairs"
        + (" of a phase" if ph.split else ""),
        f"    const int64_t {tap_loops};  // the taps "
        + ("a phase reads: every stride-th of the filter's" if ph.split else "of the filter"),
        f"    __shared__ __align__(16) float kg_ta[{width}][{side_m + LANES}];",
        f"    __shared__ __align__(16) float kg_tb[{width}][{side_n + LANES}];",
        f"    const int kg_tx = threadIdx.x % {tile.threads_n}, kg_ty = threadIdx.x / {tile.threads_n};",
        f"    const int64_t kg_g = blockIdx.z % {geo.groups}, kg_m0 = blockIdx.y * {side_m},"
        f" kg_j0 = blockIdx.x * {side_n};",
    ]
    if ph.split:  # this block's phase: per dimension its first tap (the phase) and first output position
        lines.append(f"    int64_t kg_phase = blockIdx.z / {geo.groups};")
        for j in reversed(dims):
            s, pad = ph.stride[j], geo.padding[j]
            lines.append(
                f"    const int64_t kg_tap{j} = kg_phase % {s}, kg_first{j} = (kg_tap{j} + {s} - {pad % s})"
                f" % {s}; kg_phase /= {s};"
            )
    # the input this thread stages: one column (the same in every slice), a row of the slice per pass
    passes = THREADS // side_n
    loads_b = -(-width // passes)
    lines += [
        f"    const int64_t kg_sj = kg_j0 + threadIdx.x % {side_n};",
        *(f"    {line}" for line in _position(tile, "(kg_sj < N ? kg_sj : 0)", "kg_s")),
    ]
    group_x = f" + kg_g * {geo.channels}" if geo.groups > 1 else ""
    unflat = [f"const int c = kg_r / {taps};", f"int kg_t = kg_r % {taps};"]
    for j in reversed(dims):
        unflat.append(f"const int k{j} = kg_t % {ph.taps[j]}; kg_t /= {ph.taps[j]};")
    if ph.split:  # tap k of the phase is the filter's tap + k·s; it reads the input k behind the column's
        for j in dims:
            s, pad = ph.stride[j], geo.padding[j]
            lines.append(f"    const int64_t kg_u{j} = (kg_sp{j} + {pad} - kg_tap{j}) / {s};")
        at = [f"q{j}" for j in dims]
        place = [f"const int64_t q{j} = kg_u{j} - k{j};" for j in dims]
        inside = " && ".join(
            f"kg_tap{j} + k{j} * {ph.stride[j]} < {geo.taps[j]} && q{j} >= 0 && q{j} < {geo.spatial_in[j]}"
            for j in dims
        )
        out_ok = " && ".join(f"kg_sp{j} < {geo.spatial_out[j]}" for j in dims)
    else:
        place, inside, at = geo.placed("kg_sp", "k")
        out_ok = "true"
    spatial = "0"
    for j in dims:
        spatial = f"({spatial}) * {geo.spatial_in[j]} + {at[j]}" if spatial != "0" else at[j]
    lines.append(f"    const float* kg_xb = p_{xn} + (kg_sb * {geo.in_channels}{group_x}) * {plane};")
    constant = passes == 1 and not geo.transposed and not any(geo.padding)
    if constant:  # every tap inside: a row's offset from the column's first input is a number
        lines += _constant_rows(geo, tile)
        x_at, x_ok = "kg_xs + kg_dx[kg_q]", "kg_xs >= 0"
    else:
        lines += [
            f"    int kg_xo[{loads_b}];  // a staged row's offset from the slice's first channel, -1: 0",
            f"    #pragma unroll\n    for (int kg_q = 0; kg_q < {loads_b}; ++kg_q) {{",
            f"        const int kg_r = threadIdx.x / {side_n} + kg_q * {passes};",
            f"        {' '.join(unflat)}",
            f"        {' '.join(place)}",
            f"        kg_xo[kg_q] = (kg_r < {width} && kg_sj < N && {out_ok} && {inside})"
            f" ? int(c * {plane} + {spatial}) : -1;",
            "    }",
        ]
        x_at, x_ok = "kg_xo[kg_q]", "kg_xo[kg_q] >= 0"
    # the filter values this thread stages: a block's rows, each a slice of its channels' taps
    loads_a = -(-width * side_m // THREADS)
    if ph.split:
        tap_flat = "0"
        for j in dims:
            f_j = f"(kg_tap{j} + k{j} * {ph.stride[j]})"
            tap_flat = f"({tap_flat}) * {geo.taps[j]} + {f_j}" if tap_flat != "0" else f_j
        tap_ok = " && ".join(f"kg_tap{j} + k{j} * {ph.stride[j]} < {geo.taps[j]}" for j in dims)
    else:
        tap_flat, tap_ok = "kg_r % " + str(taps), "true"
    if geo.transposed:  # w[in channel, out channel within the group, taps...]: a channel is M x taps
        w_at, per_channel = f"(c * {rows} + m) * {filter_taps} + {tap_flat}", rows * filter_taps
    else:  # w[out channel, in channel of its group, taps...]
        w_at, per_channel = f"m * {geo.channels * filter_taps} + c * {filter_taps} + {tap_flat}", filter_taps
    lines += [
        f"    const float* kg_wb = p_{wn} + kg_g * {rows * geo.channels * filter_taps};",
        f"    int kg_wo[{loads_a}];  // a staged filter value's offset, as kg_xo",
        f"    #pragma unroll\n    for (int kg_q = 0; kg_q < {loads_a}; ++kg_q) {{",
        f"        const int kg_e = threadIdx.x + kg_q * {THREADS};",
        f"        const int64_t m = kg_m0 + kg_e / {width}; const int kg_r = kg_e % {width};",
        f"        {' '.join(unflat)}",
        f"        kg_wo[kg_q] = (kg_e < {width * side_m} && m < M && {tap_ok}) ? int({w_at}) : -1;",
        "    }",
    ]
    return (
        "\n".join(lines) + f"\n    float kg_total[{tile.per_m}][{tile.per_n}];\n"
        f"    #pragma unroll\n    for (int kg_i = 0; kg_i < {tile.per_m}; ++kg_i)\n"
        f"        #pragma unroll\n        for (int kg_j = 0; kg_j < {tile.per_n}; ++kg_j)"
        " kg_total[kg_i][kg_j] = 0.0f;\n"
        "    // the next slice's values wait in registers while the block computes on this one\n"
        f"    float kg_na[{loads_a}], kg_nb[{loads_b}];\n"
        "    auto kg_fetch = [&](int64_t kg_c0) {  // the slice from input channel kg_c0 of the group\n"
        f"        #pragma unroll\n        for (int kg_q = 0; kg_q < {loads_a}; ++kg_q)\n"
        f"            kg_na[kg_q] = kg_wo[kg_q] >= 0 ? kg_wb[kg_c0 * {per_channel} + kg_wo[kg_q]] : 0.0f;\n"
        f"        #pragma unroll\n        for (int kg_q = 0; kg_q < {loads_b}; ++kg_q)\n"
        f"            kg_nb[kg_q] = {x_ok} ? kg_xb[kg_c0 * {plane} + {x_at}] : 0.0f;\n"
        "    };\n"
        "    kg_fetch(0);\n"
        f"    for (int64_t kg_c0 = 0; kg_c0 < {geo.channels}; kg_c0 += {tile.per_slice}) {{\n"
        f"        #pragma unroll\n        for (int kg_q = 0; kg_q < {loads_a}; ++kg_q) {{\n"
        f"            const int kg_e = threadIdx.x + kg_q * {THREADS};\n"
        f"            if (kg_e < {width * side_m}) kg_ta[kg_e % {width}][kg_e / {width}] = kg_na[kg_q];\n"
        "        }\n"
        f"        #pragma unroll\n        for (int kg_q = 0; kg_q < {loads_b}; ++kg_q) {{\n"
        f"            const int kg_r = threadIdx.x / {side_n} + kg_q * {passes};\n"
        f"            if (kg_r < {width}) kg_tb[kg_r][threadIdx.x % {side_n}] = kg_nb[kg_q];\n"
        "        }\n"
        "        __syncthreads();\n"
        f"        if (kg_c0 + {tile.per_slice} < {geo.channels}) kg_fetch(kg_c0 + {tile.per_slice});\n"
    )
