"""The contraction kind's skeletons: the matmul family and direct convolutions (plain, transposed,
grouped, strided, dilated, 1-3D), one thread per output element, operands read through accessors `A(k)`,
`B(k)` or `x(c, k...)`; the model writes the sum into `result`. At aggressive ambition a product's
pointwise epilogue is fused into its kernel (`fused_contract`): the framework writes the sum and the model
one line per epilogue step (measured: given the sum to write and the steps after it, the 1.5B wrote the
steps alone on every fused product it was given, L2 p3 and p8, three answers each)."""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Any

from regions.epilogue import Epilogue, split
from regions.library import PRELUDE
from regions.model import Region, RegionError
from regions.reduce import LONG_SUM
from regions.skeleton import (
    BODY_MARK,
    SET_RESULT,
    Contract,
    add_result,
    facts_text,
    launch_info,
    loop_head,
    region_signature,
    role_lines,
    step_code,
)

MATMUL = {"torch.matmul", "torch.mm", "torch.bmm", "torch.nn.functional.linear"}
CONV = {f"torch.nn.functional.conv{t}{d}d": d for d in (1, 2, 3) for t in ("", "_transpose")}


def fused_contract(region: Region, names: dict[str, str]) -> Contract:
    """A product and its epilogue in one kernel: the product's skeleton with the sum the framework's,
    named `result`, then one line per epilogue step reading it (renumbered t1, t2, ... after it)."""
    if any(s.target in MATMUL | set(CONV) for s in region.steps[1:]):
        raise RegionError(f"{region.id}: only one product per region has a contract")
    core, names, extra = split(region, names, "result")
    build = matmul_contract if core.steps[0].target in MATMUL else conv_contract
    return build(core, names, extra)


@dataclass(frozen=True)
class Operands:
    """A matmul-family product's sizes and how to read its operands: `a_at` reads A at (bt, m, k), `b_at`
    reads B at (bt, k, j), as C expressions over those names (the launch shapes share them)."""

    m_rows: int
    n_cols: int
    k_dim: int
    batch: int
    a_at: str
    b_at: str
    linear: bool


def operands(region: Region, names: dict[str, str]) -> Operands:
    """The product's operands; RegionError for a matmul of a vector."""
    step = region.steps[0]
    out = region.output
    a, b = region.inputs[:2]
    if step.target == "torch.nn.functional.linear":
        k_dim = a.shape[-1]
        return Operands(
            prod(a.shape[:-1]),
            b.shape[0],
            k_dim,
            1,
            f"p_{names[a.name]}[m * {k_dim} + k]",
            f"p_{names[b.name]}[j * {k_dim} + k]",
            True,
        )
    if len(a.shape) < 2 or len(b.shape) < 2:
        raise RegionError(f"{region.id}: matmul of a vector has no contract yet")
    k_dim, n_cols = b.shape[-2], b.shape[-1]
    m_rows = a.shape[-2]
    a_batch = f"bt * {m_rows * k_dim} + " if prod(a.shape[:-2]) > 1 else ""
    b_batch = f"bt * {k_dim * n_cols} + " if prod(b.shape[:-2]) > 1 else ""
    return Operands(
        m_rows,
        n_cols,
        k_dim,
        prod(out.shape[:-2]),
        f"p_{names[a.name]}[{a_batch}m * {k_dim} + k]",
        f"p_{names[b.name]}[{b_batch}k * {n_cols} + j]",
        False,
    )


def matmul_contract(region: Region, names: dict[str, str], extra: Epilogue | None = None) -> Contract:
    (step,) = region.steps
    out = region.output
    a, b, *rest = region.inputs
    ops = operands(region, names)
    linear, k_dim, m_rows, n_cols, batch = ops.linear, ops.k_dim, ops.m_rows, ops.n_cols, ops.batch
    a_at, b_at = ops.a_at, ops.b_at
    kernel = f"region_{region.id}"
    an, bn = names[a.name], names[b.name]
    whole = extra or Epilogue(region)
    sig = region_signature(kernel, whole.region, names)
    accessors = [
        f"        auto {an} = [&](int64_t k) -> float {{ return {a_at}; }};  // {an}[.., m, k]",
        f"        auto {bn} = [&](int64_t k) -> float {{ return {b_at}; }};  // "
        + (f"{bn}[j, k]" if linear else f"{bn}[.., k, j]"),
    ]
    if rest and extra:
        cn = names[rest[0].name]
        accessors.append(f"        const float* {cn} = p_{cn};  // {cn}[j]: the bias of column j")
    wide = k_dim > LONG_SUM  # a float sum of this many terms misses the tolerance: the skeleton's is double
    if extra:  # fused: the sum is the framework's, the body writes the epilogue's steps from it
        start = f"p_{names[rest[0].name]}[j]" if rest else "0.0f"
        result = (
            f"        {'double' if wide else 'float'} result = {start};\n"
            f"        for (int64_t k = 0; k < K; ++k) result += {an}(k) * {bn}(k);  // the sum\n"
        )
    else:  # double where K is long (K = LONG_SUM terms and more miss the tolerance in float)
        result = add_result("double" if wide else "float", f"{an}(k) * {bn}(k)")
    head = (
        f"{PRELUDE}\n{sig} {{\n    const int64_t M = {m_rows}, N = {n_cols}, K = {k_dim};\n{loop_head('n')}"
        "        const int64_t j = i % N, m = (i / N) % M;\n"
        + ("        const int64_t bt = i / (N * M);\n" if batch > 1 else "")
        + "\n".join(accessors)
        + f"\n{whole.loads}        // {step_code(step, names)}\n{result}"
        + f"{whole.todo}{BODY_MARK}"
    )
    # a lone product's bias is the framework's: added after the body's sum (the 1.5B left it out of its
    # sum, told to add it: L3's MLPs, aggressive ambition)
    bias = f" + p_{names[rest[0].name]}[j]" if rest and not extra else ""
    tail = f"        p_out[i] = {whole.last}{bias};\n    }}\n}}\n"
    notes = {a.name: f" read as {an}(k)", b.name: f" read as {bn}(k)", **whole.notes}
    if bias:
        notes[rest[0].name] = " (the framework adds it to your sum: leave it out)"
    roles = role_lines(whole.region, names, notes)
    element = f"one output element (row m, column j{', batch bt' if batch > 1 else ''})"
    if extra:
        role = f"- each thread computes {element}: the framework has summed it into `result`{whole.then}"
    else:
        role = (
            f"- each thread computes {element} as `result`, a sum over k in [0, K), K = {k_dim}: result "
            f"is a {'double' if wide else 'float'} that starts at 0: add each {an}(k) * {bn}(k) to it, "
            "never set it"
        )
    roles.insert(0, role)
    contract = Contract(
        region.id, "contraction", kernel, sig, head, tail, "", launch_info(whole.region, kernel, out.numel)
    )
    contract.facts = facts_text(whole.region, names, head, roles)
    contract.reads = whole.reads  # fused: the epilogue's operands alone (the sum is the framework's)
    if bias:  # the bias is the framework's: the body reads the operands alone
        contract.reads = [an, bn]
    return contract


def conv_contract(region: Region, names: dict[str, str], extra: Epilogue | None = None) -> Contract:
    """Direct convolution: one thread per output element; x(c, k...) reads the input under the filter
    tap (0 in the padding), w(c, k...) the filter; the model writes the sum over c and the taps. In a
    grouped (or depthwise) convolution c runs over the output channel's own group: the accessor adds the
    group's first input channel, so the body is the same loop. A transposed convolution is the same body
    too: its accessor reads the input element that tap k scatters onto this output (0 where none does:
    between strides, past the edges), and its filter is laid out (in, out / groups, taps...)."""
    (step,) = region.steps
    geo = conv_geometry(region)
    dims, transposed, groups, channels = geo.dims, geo.transposed, geo.groups, geo.channels
    x, w, *bias = region.inputs
    out = region.output
    spatial_out, taps, per_group = geo.spatial_out, geo.taps, geo.per_group
    xn, wn = names[x.name], names[w.name]
    whole = extra or Epilogue(region)
    sig = region_signature(f"region_{region.id}", whole.region, names)
    ks = ", ".join(f"int64_t k{j}" for j in range(dims))
    coords = ["        int64_t rest = i;"]
    for j in range(dims - 1, -1, -1):
        coords.append(f"        const int64_t p{j} = rest % {spatial_out[j]}; rest /= {spatial_out[j]};")
    coords.append(f"        const int64_t o = rest % {out.shape[1]}, b = rest / {out.shape[1]};")
    taps_at, inside, at = geo.placed("p", "k")
    first = f"(o / {per_group}) * {channels} + " if groups > 1 else ""  # the group's channel 0
    x_index = geo.x_index("b", f"{first}c", at)
    if transposed:  # w[in channel, out channel within the group, taps...]
        w_index = f"({first}c) * {per_group} + " + (f"o % {per_group}" if groups > 1 else "o")
    else:
        w_index = f"o * {w.shape[1]} + c"
    for j in range(dims):
        w_index = f"({w_index}) * {taps[j]} + k{j}"
    accessors = [
        f"        auto {xn} = [&](int64_t c, {ks}) -> float {{\n"
        f"            {' '.join(taps_at)}\n"
        f"            return ({inside}) ? p_{xn}[{x_index}] : 0.0f;\n        }};",
        f"        auto {wn} = [&](int64_t c, {ks}) -> float {{ return p_{wn}[{w_index}]; }};",
    ]
    if bias:
        bn = names[bias[0].name]
        accessors.append(f"        const float* {bn} = p_{bn};  // {bn}[o]: the bias of channel o")
    loops = ", ".join(f"K{j} = {taps[j]}" for j in range(dims))
    tap_args = ", ".join(f"k{j}" for j in range(dims))
    if extra:  # fused: the sum is the framework's, the body writes the epilogue's steps from it
        nest = " ".join(f"for (int64_t k{j} = 0; k{j} < K{j}; ++k{j})" for j in range(dims))
        start = f"p_{names[bias[0].name]}[o]" if bias else "0.0f"
        result = (
            f"        float result = {start};\n        for (int64_t c = 0; c < C; ++c) {nest}\n"
            f"            result += {xn}(c, {tap_args}) * {wn}(c, {tap_args});  // the sum\n"
        )
    else:
        result = f"{SET_RESULT}\n"
    head = (
        f"{PRELUDE}\n{sig} {{\n    const int64_t C = {channels}, {loops};\n{loop_head('n')}"
        + "\n".join(coords)
        + "\n"
        + "\n".join(accessors)
        + f"\n{whole.loads}        // {step_code(step, names)}\n{result}"
        + f"{whole.todo}{BODY_MARK}"
    )
    tail = f"        p_out[i] = {whole.last};\n    }}\n}}\n"
    taps_text = ", ".join(f"k{j} in [0, K{j})" for j in range(dims))
    roles = role_lines(
        whole.region,
        names,
        {
            x.name: f" read as {xn}(c, {tap_args}): the input "
            + (
                "that tap k carries onto this output element, 0 where none does"
                if transposed
                else "under tap k of this output element, 0 in the padding"
            )
            + (f"; c counts the {channels} input channels of channel o's group" if groups > 1 else ""),
            w.name: f" read as {wn}(c, {tap_args})",
            **whole.notes,
        },
    )
    roles.insert(
        0,
        f"- each thread computes one output element (batch b, channel o): the framework has summed it "
        f"into `result`{whole.then}"
        if extra
        else f"- each thread computes one output element (batch b, channel o) as `result`: the sum over "
        f"c in [0, C) and {taps_text} of {xn}(...) * {wn}(...)" + (", plus the bias" if bias else ""),
    )
    contract = Contract(
        region.id,
        "contraction",
        f"region_{region.id}",
        sig,
        head,
        tail,
        "",
        launch_info(whole.region, f"region_{region.id}", out.numel),
    )
    contract.facts = facts_text(whole.region, names, head, roles)
    contract.reads = whole.reads  # fused: the epilogue's operands alone (the sum is the framework's)
    return contract


@dataclass(frozen=True)
class ConvGeometry:
    """A convolution's sizes and how its taps meet the input, shared by its skeletons (one thread per
    output element here, the implicit product of regions.conv_tiles)."""

    dims: int
    transposed: bool
    groups: int
    channels: int  # C: the input channels one output channel reads (its group's)
    per_group: int  # the output channels of one group
    in_channels: int
    spatial_in: tuple[int, ...]
    spatial_out: tuple[int, ...]
    taps: tuple[int, ...]
    stride: tuple[int, ...]
    padding: tuple[int, ...]
    dilation: tuple[int, ...]

    def placed(self, p: str, k: str) -> tuple[list[str], str, list[str]]:
        """Where tap `k`j of output position `p`j reads the input: the lines that place it (q0, q1, ...),
        the test that it lands inside the input, and the input coordinates. A transposed convolution reads
        the input element the tap scatters onto this output: a whole step of the stride, within the input."""
        d = range(self.dims)
        if self.transposed:
            lines = [
                f"const int64_t q{j} = {p}{j} + {self.padding[j]} - {k}{j} * {self.dilation[j]};" for j in d
            ]
            inside = " && ".join(
                f"q{j} >= 0 && q{j} % {self.stride[j]} == 0 && q{j} / {self.stride[j]} < {self.spatial_in[j]}"
                for j in d
            )
            return lines, inside, [f"q{j} / {self.stride[j]}" if self.stride[j] != 1 else f"q{j}" for j in d]
        lines = [
            f"const int64_t q{j} = {p}{j} * {self.stride[j]} - {self.padding[j]}"
            f" + {k}{j} * {self.dilation[j]};"
            for j in d
        ]
        inside = " && ".join(f"q{j} >= 0 && q{j} < {self.spatial_in[j]}" for j in d)
        return lines, inside, [f"q{j}" for j in d]

    def x_index(self, batch: str, channel: str, at: list[str]) -> str:
        """The flat index of the input at (batch, channel, coordinates `at`)."""
        index = f"{batch} * {self.in_channels} + {channel}"
        for j in range(self.dims):
            index = f"({index}) * {self.spatial_in[j]} + {at[j]}"
        return index


def conv_geometry(region: Region) -> ConvGeometry:
    """The geometry of the region's convolution (its first step); RegionError for arguments that are not
    integers per dimension."""
    step = region.steps[0]
    dims = CONV[step.target]
    kwargs = dict(step.kwargs)
    groups = int(kwargs.get("groups", 1))
    x, w = region.inputs[:2]
    out = step.out
    stride, padding, dilation = (
        _per_dim(kwargs.get(k, d), dims) for k, d in (("stride", 1), ("padding", 0), ("dilation", 1))
    )
    return ConvGeometry(
        dims,
        "transpose" in step.target,
        groups,
        x.shape[1] // groups,
        out.shape[1] // groups,
        x.shape[1],
        tuple(x.shape[2:]),
        tuple(out.shape[2:]),
        tuple(w.shape[2:]),
        stride,
        padding,
        dilation,
    )


def _per_dim(value: Any, dims: int) -> tuple[int, ...]:
    values = tuple(value) if isinstance(value, list | tuple) else (value,) * dims
    if len(values) != dims or not all(isinstance(v, int) for v in values):
        raise RegionError(f"convolution argument {value!r} has no contract (expected {dims} integers)")
    return values
