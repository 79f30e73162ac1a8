"""The window loop kind (pooling): one thread per output element, the window placed by the framework.

The skeleton unravels the output index into a plane (the leading dims: batch, channels) and one position
per pooled dim, places the window there (kernel size, stride, padding, dilation; an adaptive pool's start
and end, which differ from one output to the next), and hands the body an accessor over window offsets,
`x(a)`, `x(a, b)` or `x(a, b, c)` with 0 <= a < KH ..., that reads padding and positions past the input as
the op's neutral value: -INFINITY for a max, 0 for an average. The combine rule is the skeleton's too:
`result` starts at the neutral value, and an average's sum is divided, after the body and out of its
reach, by the divisor PyTorch's rule gives (count_include_pad, divisor_override, a ceil_mode window
clipped at the padded edge). What is left to the model is the loop over the window, folding each value
into `result`. Measured with the embedded 1.5B (CPU emulation): asked to set `result` to the average
itself, it stored `p_out[i]` by hand and called kg_max with nine arguments; asked to fold, it wrote the
fold without its loops (6 of 37) or divided by `count` itself (1 of 37); an undefined loop counter is
now answered with its loop, and the divisor is out of the body's scope. With a fused epilogue (aggressive)
the loops and the fold are the framework's too and the body writes the steps after them (regions.epilogue).
"""

from __future__ import annotations

from math import prod
from typing import Any

from regions.epilogue import Epilogue, split
from regions.library import PRELUDE
from regions.model import Region, RegionError
from regions.skeleton import (
    BODY_MARK,
    Contract,
    facts_text,
    launch_info,
    loop_head,
    region_signature,
    role_lines,
)


def _spellings(op: str) -> dict[str, int]:
    """The traced names of a pooling op in 1-3D (functional or torch builtin) -> its pooled dims."""
    return {f"{ns}{op}{d}d": d for d in (1, 2, 3) for ns in ("torch.nn.functional.", "torch.")}


MAX_POOL = _spellings("max_pool")
AVG_POOL = _spellings("avg_pool")
ADAPTIVE_AVG = _spellings("adaptive_avg_pool")
ADAPTIVE_MAX = _spellings("adaptive_max_pool")
WINDOW: dict[str, int] = {**MAX_POOL, **AVG_POOL, **ADAPTIVE_AVG, **ADAPTIVE_MAX}

_SIZES = {1: ("K",), 2: ("KH", "KW"), 3: ("KD", "KH", "KW")}
_OFFSETS = {1: ("a",), 2: ("a", "b"), 3: ("a", "b", "c")}


def window_contract(region: Region, names: dict[str, str]) -> Contract:
    """The contract of a pooling region, alone or with its fused epilogue (regions.epilogue: the framework
    then folds the window itself and the body writes the steps, an average's reading `pooled`);
    RegionError for what it does not cover (a pooled input that is not the op's first argument, indices
    returned)."""
    step = region.steps[0]
    is_max = step.target in MAX_POOL or step.target in ADAPTIVE_MAX
    whole = Epilogue(region)
    fused = len(region.steps) > 1
    if fused:
        region, names, whole = split(region, names, "result" if is_max else "pooled")
    dims = WINDOW[step.target]
    (x,) = region.inputs
    args = dict(step.kwargs)
    if args.get("return_indices"):
        raise RegionError(f"{region.id}: a pooling that returns its indices has no contract yet")
    out = region.output
    lead = len(out.shape) - dims
    if lead < 0 or tuple(x.shape[:lead]) != tuple(out.shape[:lead]):
        raise RegionError(f"{region.id}: pooling input {x.shape} and output {out.shape} do not line up")
    size_in, size_out = x.shape[lead:], out.shape[lead:]
    adaptive = step.target in ADAPTIVE_AVG or step.target in ADAPTIVE_MAX
    xn = names[x.name]
    kernel = f"region_{region.id}"
    sig = region_signature(kernel, whole.region, names)
    sizes, offsets = _SIZES[dims], _OFFSETS[dims]
    lines = _unravel_positions(size_out)
    lines.append(f"        const float* p_plane = p_{xn} + plane * {prod(size_in)};")
    if adaptive:
        lines += _adaptive_window(size_in, size_out, sizes)
        places = [f"(s{j} + {offsets[j]})" for j in range(dims)]
        inside = ""
        count = " * ".join(f"(float){s}" for s in sizes)
    else:
        kernel_size = _per_dim(args.get("kernel_size", step.args[1] if len(step.args) > 1 else None), dims)
        stride = _per_dim(args.get("stride") or kernel_size, dims)
        padding = _per_dim(args.get("padding", 0), dims)
        dilation = _per_dim(args.get("dilation", 1), dims)
        lines += [f"        const int64_t {s} = {k};" for s, k in zip(sizes, kernel_size, strict=True)]
        lines += [
            f"        const int64_t s{j} = o{j} * {stride[j]} - {padding[j]};  // the window's first position"
            for j in range(dims)
        ]
        places = [
            f"(s{j} + {offsets[j]}{f' * {dilation[j]}' if dilation[j] != 1 else ''})" for j in range(dims)
        ]
        inside = " && ".join(f"p{j} >= 0 && p{j} < {size_in[j]}" for j in range(dims))
        count = "" if is_max else _avg_count(args, kernel_size, padding, size_in, sizes)
    flat = _flat(size_in, dims)
    neutral = "-INFINITY" if is_max else "0.0f"
    params = ", ".join(f"int64_t {o}" for o in offsets)
    positions = " ".join(f"const int64_t p{j} = {places[j]};" for j in range(dims))
    read = f"p_plane[{flat}]"
    value = f"({inside}) ? {read} : {neutral}" if inside else read
    lines.append(f"        auto {xn} = [&]({params}) -> float {{ {positions} return {value}; }};")
    reads = f"{xn}({', '.join(offsets)})"
    counters = [f"for (int64_t {o} = 0; {o} < {s}; ++{o})" for o, s in zip(offsets, sizes, strict=True)]
    fold = window_fold(is_max, reads)
    if fused:  # the framework owns the loop nest and the fold; the body writes the steps after it
        lines.append(f"        float result = {neutral};")
        lines.append(f"        {' '.join(counters)} {fold}  // {'the max' if is_max else 'the sum'}")
        if not is_max:
            lines.append(f"        const float pooled = result / ({count});  // the average")
        tail = f"        p_out[i] = {whole.last};\n    }}\n}}\n"
    elif is_max:
        lines.append(f"        float result = -INFINITY;  // fold every {reads} into it with fmaxf")
        tail = "        p_out[i] = result;\n    }\n}\n"
    else:
        lines.append(
            f"        float result = 0.0f;  // add every {reads} to it; the framework divides the sum"
        )
        # The divisor lives after the body, out of its reach: a body cannot divide twice (measured: one of
        # 37 greedy bodies divided by count itself before the framework did).
        tail = (
            f"        const float count = {count};  // the average's divisor, PyTorch's rule\n"
            "        p_out[i] = result / count;\n    }\n}\n"
        )
    head = (
        f"{PRELUDE}\n{sig} {{\n{loop_head('n')}"
        + "\n".join(lines)
        + f"\n{whole.loads}{whole.todo}{BODY_MARK}"
    )
    window = " x ".join(sizes)
    ranges = ", ".join(f"{o} in [0, {s})" for o, s in zip(offsets, sizes, strict=True))
    where = (
        "padding or past the input reads as " + neutral if inside else "every position is inside the input"
    )
    notes = {x.name: f" read through the window as {reads}, {ranges}; {where}", **whole.notes}
    roles = role_lines(whole.region, names, notes)
    if fused:
        what = (
            "; the framework folds it into `result`, the max"
            if is_max
            else "; the framework sums it into `result`, and `pooled` is the average (PyTorch's divisor)"
        )
    elif is_max:
        what = "; loop over it and fold every value into `result` with fmaxf (it starts at -INFINITY)"
    else:
        what = (
            "; loop over it and add every value to `result` (it starts at 0): after your body the "
            "framework divides the sum by the divisor PyTorch's rule gives this output"
        )
    roles.insert(
        0,
        f"- each thread computes one output element ({out.numel} of them): its window is {window}"
        + (" (sizes differ from one output to the next)" if adaptive else "")
        + what
        + whole.then,
    )
    contract = Contract(
        region.id, "window", kernel, sig, head, tail, "", launch_info(whole.region, kernel, out.numel)
    )
    contract.value = whole.value
    contract.reads = whole.reads  # fused: the epilogue's operands alone (the fold is the framework's)
    if not fused:
        contract.hints = {
            o: f"a loop counter your body declares: write the loop `{loop}` around the line that uses it"
            for o, loop in zip(offsets, counters, strict=True)
        }
        if not is_max:
            contract.hints["count"] = (
                "the framework divides `result` by the divisor after your body: leave the sum"
            )
        loops = " ".join(f"{loop} {{" for loop in counters)
        roles.insert(1, f"- the loops over the window are yours to write: {loops} ... {'}' * dims}")
    contract.facts = facts_text(whole.region, names, head, roles)
    return contract


def _unravel_positions(size_out: tuple[int, ...]) -> list[str]:
    """o0..o{d-1}: this output's position along each pooled dim; `plane`: the index over the leading dims."""
    lines = ["        int64_t rest = i;"]
    for j in range(len(size_out) - 1, -1, -1):
        lines.append(f"        const int64_t o{j} = rest % {size_out[j]}; rest /= {size_out[j]};")
    lines.append("        const int64_t plane = rest;")
    return lines


def _adaptive_window(
    size_in: tuple[int, ...], size_out: tuple[int, ...], sizes: tuple[str, ...]
) -> list[str]:
    """An adaptive pool's window along each dim: [floor(o * I / O), ceil((o + 1) * I / O))."""
    lines = []
    for j, (n_in, n_out) in enumerate(zip(size_in, size_out, strict=True)):
        lines += [
            f"        const int64_t s{j} = (o{j} * {n_in}) / {n_out};",
            f"        const int64_t {sizes[j]} = ((o{j} + 1) * {n_in} + {n_out} - 1) / {n_out} - s{j};",
        ]
    return lines


def _avg_count(
    args: dict[str, Any],
    kernel_size: tuple[int, ...],
    padding: tuple[int, ...],
    size_in: tuple[int, ...],
    sizes: tuple[str, ...],
) -> str:
    """The divisor of an average pool as PyTorch computes it for this output (a C expression)."""
    if args.get("divisor_override"):
        return f"{float(args['divisor_override'])!r}f"
    terms = []
    for j in range(len(kernel_size)):
        edge = size_in[j] + padding[j]  # a ceil_mode window may reach past the padding: clipped there
        end = f"(s{j} + {sizes[j]} < {edge} ? s{j} + {sizes[j]} : {edge})"
        if args.get("count_include_pad", True):
            terms.append(f"(float)({end} - s{j})")
        else:  # only the positions inside the input count
            last = f"({end} < {size_in[j]} ? {end} : {size_in[j]})"
            terms.append(f"(float)({last} - (s{j} > 0 ? s{j} : 0))")
    return " * ".join(terms)


def _flat(size_in: tuple[int, ...], dims: int) -> str:
    """The offset of position (p0, ..., p{d-1}) inside one plane."""
    terms = []
    for j in range(dims):
        stride = prod(size_in[j + 1 :])
        terms.append(f"p{j}" + (f" * {stride}" if stride != 1 else ""))
    return " + ".join(terms)


def _per_dim(value: Any, dims: int) -> tuple[int, ...]:
    if value is None:
        raise RegionError("a pooling without a kernel size has no contract")
    if isinstance(value, list | tuple):
        values = tuple(int(v) for v in value)
        return values * dims if len(values) == 1 else values
    return (int(value),) * dims


def window_fold(is_max: bool, value: str) -> str:
    """The C line that folds one window value into `result` (the skeleton's fused fold, the rule's body)."""
    return f"result = fmaxf(result, {value});" if is_max else f"result += {value};"
