"""A region's contract: what the model reads, and the kernel skeleton the framework owns around its body.

Skeletons follow the region's kind (the same probe contract scored 14/20 on the shared tasks and 4/10 on
others where it did not fit the kind):
- map: one thread per output element (grid-stride), the output index unravelled, every input loaded at
  that element's broadcast index before the body; the model writes one line per step, the framework
  stores the last step's value.
- reduce: one thread per output row; the reduced dim read through an accessor `x(k)`; the model writes the
  loop(s) and either `result` (sum, mean, max, ...) or `out(k)` (softmax, layer_norm).
- contraction (matmul family): one thread per output element, operands through accessors `A(k)`, `B(k)`;
  the model writes the sum over k into `result`. No operand is preloaded: nothing here is elementwise.
Shapes are baked into the kernel as constants (KernelBench's shapes are fixed), so the signature holds
only pointers, float32 scalars and the int64 element count. Names the model reads are C identifiers that
cannot shadow a helper: step outputs become t1, t2, ...
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from evaluator.regions.library import GLOSSARY, HELPERS, PRELUDE
from evaluator.regions.model import Region, RegionError, Step

BODY_MARK = "        // ---- your code: from here ----"
_C_KEYWORDS = {
    "auto",
    "break",
    "case",
    "char",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "float",
    "for",
    "goto",
    "if",
    "int",
    "long",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "typedef",
    "union",
    "unsigned",
    "void",
    "volatile",
    "while",
    "out",
    "result",
    "n",
    "i",
}
_REDUCE = {
    "torch.sum",
    "torch.mean",
    "torch.amax",
    "torch.max",
    "torch.amin",
    "torch.min",
    "torch.logsumexp",
    "torch.softmax",
    "torch.log_softmax",
    "torch.nn.functional.layer_norm",
}
_ROWWISE = {"torch.softmax", "torch.log_softmax", "torch.nn.functional.layer_norm"}  # write out(k)
_MATMUL = {"torch.matmul", "torch.mm", "torch.bmm", "torch.nn.functional.linear"}
_CONV = {f"torch.nn.functional.conv{d}d": d for d in (1, 2, 3)}
LONG_SUM = 4096  # a plain float sum over more terms than this misses atol = rtol = 1e-4 (probe: K = 524288)


@dataclass
class Contract:
    """Everything about one region that is not the model's to write."""

    region_id: str
    kind: str
    kernel_name: str
    signature: str
    head: str  # prelude, signature and the code before the body (the framework prepends it)
    tail: str  # the code after the body (stores, closing braces)
    facts: str  # the region as PyTorch, op meanings, tensors, the kernel so far: what the prompt carries
    launch: dict[str, Any] = field(default_factory=dict)  # argument order and element count for a launcher

    def assemble(self, body: str) -> str:
        """The whole kernel source with the model's body in place (indented under the marker)."""
        lines = [
            ("        " + line.strip()) if line.strip() else "" for line in body.strip("\n").splitlines()
        ]
        return f"{self.head}\n" + "\n".join(lines) + f"\n{self.tail}"


def render(region: Region) -> Contract:
    """The contract of one region; RegionError when no skeleton fits it (e.g. convolutions, non-float32)."""
    for t in [*region.inputs, region.output]:
        if t.dtype != "float32":
            raise RegionError(f"{region.id}: only float32 tensors have contracts ({t.name} is {t.dtype})")
    names = _c_names(region)
    if region.kind == "map":
        return _map(region, names)
    targets = {s.target for s in region.steps}
    if region.kind == "reduce" and len(region.steps) == 1 and targets <= _REDUCE:
        return _reduce(region, names)
    if region.kind == "contraction" and len(region.steps) == 1 and targets <= _MATMUL:
        return _matmul(region, names)
    if region.kind == "contraction" and len(region.steps) == 1 and targets <= set(_CONV):
        return _conv(region, names)
    raise RegionError(f"{region.id}: no contract for a {region.kind} region of {sorted(targets)} yet")


# ---------------------------------------------------------------- names and shared text


def _c_names(region: Region) -> dict[str, str]:
    """fx name -> C identifier: inputs keep a sanitised name, step outputs become t1, t2, ..."""
    names: dict[str, str] = {}
    taken = set(HELPERS) | _C_KEYWORDS | {f"t{k}" for k in range(1, len(region.steps) + 1)}
    for t in region.inputs:
        base = re.sub(r"\W", "_", t.name).strip("_") or "in"
        base = f"v_{base}" if base[0].isdigit() or base in taken else base
        name, k = base, 1
        while name in taken:
            name, k = f"{base}_in" if k == 1 else f"{base}_in{k}", k + 1
        names[t.name] = name
        taken.add(name)
    for k, step in enumerate(region.steps, 1):
        names[step.out.name] = f"t{k}"
    for scalar, _ in region.scalars:
        names.setdefault(scalar, scalar)
    return names


def _renamed(code: str, names: dict[str, str]) -> str:
    """Every name replaced in one pass (t0 -> t1 must not then become t2)."""
    if not names:
        return code
    pattern = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.sub(rf"(?<![\w.])(?:{pattern})(?!\w)", lambda m: names[m.group(0)], code)


def _step_code(step: Step, names: dict[str, str]) -> str:
    return _renamed(step.code or f"{step.out.name} = {step.target}({', '.join(step.args)})", names)


def _facts(region: Region, names: dict[str, str], head: str, roles: list[str]) -> str:
    steps = "\n".join(_step_code(s, names) for s in region.steps)
    meanings = "\n".join(
        f"- {t}: {GLOSSARY.get(t, 'see the PyTorch documentation for this op')}"
        for t in dict.fromkeys(s.target for s in region.steps)
    )
    tensors = "\n".join(roles)
    body_at = head.rindex(BODY_MARK)
    return (
        f"## The PyTorch code this kernel computes\n```python\n{steps}\n```\n\n"
        f"## What each op means\n{meanings}\n\n"
        f"## Tensors (float32, contiguous)\n{tensors}\n\n"
        f"## The kernel so far (the framework writes this part, and the end)\n```cuda\n"
        f"{head[head.index('extern') : body_at + len(BODY_MARK)]}\n```"
    )


def _signature(name: str, pointers: list[str], out: str, scalars: list[str], counts: list[str]) -> str:
    params = [f"const float* __restrict__ p_{p}" for p in pointers] + [f"float* __restrict__ p_{out}"]
    params += [f"float {s}" for s in scalars] + [f"int64_t {c}" for c in counts]
    return f'extern "C" __global__ void {name}({", ".join(params)})'


def _loop(count: str) -> str:
    return (
        f"    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < {count};\n"
        f"         i += (int64_t)gridDim.x * blockDim.x) {{\n"
    )


def _launch(region: Region, name: str, count: int) -> dict[str, Any]:
    """What a launcher needs: the kernel, tensors in signature order, scalars, and the loop's count."""
    return {
        "kernel": name,
        "inputs": [t.name for t in region.inputs],
        "output": region.output.name,
        "output_shape": list(region.output.shape),
        "scalars": [s for s, _ in region.scalars],
        "count": count,
    }


def _roles(region: Region, names: dict[str, str], extra: dict[str, str]) -> list[str]:
    rows = [f"- {names[t.name]}: shape {list(t.shape)}{extra.get(t.name, '')}" for t in region.inputs]
    rows += [f"- {s}: a float scalar (a kernel argument)" for s, _ in region.scalars]
    rows.append(f"- out: shape {list(region.output.shape)}, written by the framework from your result")
    return rows


# ---------------------------------------------------------------- map


def _map(region: Region, names: dict[str, str]) -> Contract:
    out = region.output
    kernel = f"region_{region.id}"
    pointers = [names[t.name] for t in region.inputs]
    scalars = [names[s] for s, _ in region.scalars]
    sig = _signature(kernel, pointers, "out", scalars, ["n"])
    loads, needs = [], set()
    for t in region.inputs:
        offset = _broadcast_offset(t.shape, out.shape, needs)
        loads.append(f"        const float {names[t.name]} = p_{names[t.name]}[{offset}];")
    unravel = _unravel(out.shape, needs)
    dims = "".join(
        f"    const int64_t D{k} = {d};\n"
        for k, d in enumerate(out.shape)
        if needs and k > 0 and k >= min(needs)
    )
    last = f"t{len(region.steps)}"
    todo = "\n".join(f"        // {_step_code(s, names)}" for s in region.steps)
    head = (
        f"{PRELUDE}\n{sig} {{\n{dims}{_loop('n')}{unravel}"
        + "\n".join(loads)
        + f"\n        // one line per step, in order:\n{todo}\n{BODY_MARK}"
    )
    tail = f"        p_out[i] = {last};\n    }}\n}}\n"
    roles = _roles(region, names, {t.name: " (loaded at this element: use the value)" for t in region.inputs})
    lines = "`float t1 = ...;`" + (f" to `float {last} = ...;`, one line per step" if last != "t1" else "")
    roles.insert(0, f"- each thread computes element i of out (shape {list(out.shape)}); write {lines}")
    contract = Contract(region.id, "map", kernel, sig, head, tail, "", _launch(region, kernel, out.numel))
    contract.facts = _facts(region, names, head, roles)
    return contract


def _unravel(shape: tuple[int, ...], needs: set[int]) -> str:
    """Coordinates of element i, only those some broadcast input needs (innermost first)."""
    if not needs:
        return ""
    lines, lowest = ["        int64_t rest = i;"], min(needs)
    for k in range(len(shape) - 1, lowest - 1, -1):
        if k == 0:
            lines.append("        const int64_t c0 = rest;")
        elif k == lowest:
            lines.append(f"        const int64_t c{k} = rest % D{k};")
        elif k in needs:
            lines.append(f"        const int64_t c{k} = rest % D{k}; rest /= D{k};")
        else:
            lines.append(f"        rest /= D{k};")
    return "\n".join(lines) + "\n"


def _broadcast_offset(shape: tuple[int, ...], out: tuple[int, ...], needs: set[int]) -> str:
    """The flat index of this input at output element i (broadcast dims read index 0)."""
    if tuple(shape) == tuple(out):
        return "i"
    lead = len(out) - len(shape)
    if lead < 0:
        raise RegionError(f"an input of shape {shape} does not broadcast to {out}")
    terms, stride = [], 1
    for k in range(len(shape) - 1, -1, -1):
        if shape[k] != 1:
            if shape[k] != out[lead + k]:
                raise RegionError(f"an input of shape {shape} does not broadcast to {out}")
            needs.add(lead + k)
            terms.append(f"c{lead + k}" + (f" * {stride}" if stride != 1 else ""))
        stride *= shape[k]
    return " + ".join(reversed(terms)) or "0"


# ---------------------------------------------------------------- reduce


def _reduce(region: Region, names: dict[str, str]) -> Contract:
    (step,) = region.steps
    x, *params = region.inputs
    shape = x.shape
    start, stop = _reduced_span(step, shape)
    outer = _prod(shape[:start])
    length = _prod(shape[start:stop])
    inner = _prod(shape[stop:])
    kernel = f"region_{region.id}"
    xn = names[x.name]
    sig = _signature(
        kernel, [names[t.name] for t in region.inputs], "out", [names[s] for s, _ in region.scalars], ["n"]
    )
    accessors = [f"        auto {xn} = [&](int64_t k) -> float {{ return p_{xn}[base + k * {inner}]; }};"]
    for t in params:  # layer_norm's weight and bias: one value per normalized element
        accessors.append(
            f"        auto {names[t.name]} = [&](int64_t k) -> float {{ return p_{names[t.name]}[k]; }};"
        )
    rowwise = step.target in _ROWWISE
    if rowwise:
        accessors.append(
            f"        auto out = [&](int64_t k) -> float& {{ return p_out[base + k * {inner}]; }};"
        )
    head = (
        f"{PRELUDE}\n{sig} {{\n    const int64_t R = {length};  // the reduced length: k in [0, R)\n"
        f"{_loop('n')}        const int64_t base = (i / {inner}) * {length * inner} + i % {inner};\n"
        + "\n".join(accessors)
        + f"\n        // {_step_code(step, names)}\n"
        + (
            f"        // R = {length} terms: accumulate in double (or in blocks of 256 partial sums)\n"
            if length > LONG_SUM
            else ""
        )
        + (
            "        // write out(k) for every k in [0, R)\n"
            if rowwise
            else "        float result;  // set it\n"
        )
        + BODY_MARK
    )
    tail = ("" if rowwise else "        p_out[i] = result;\n") + "    }\n}\n"
    what = "out(k) for k in [0, R)" if rowwise else "`result`"
    roles = _roles(region, names, {x.name: f" read as {xn}(k), k in [0, R) along the reduced dims"})
    roles.insert(
        0,
        f"- each thread handles one row: {outer * inner} rows of R = {length} elements; compute {what}",
    )
    contract = Contract(
        region.id, "reduce", kernel, sig, head, tail, "", _launch(region, kernel, outer * inner)
    )
    contract.facts = _facts(region, names, head, roles)
    return contract


def _reduced_span(step: Step, shape: tuple[int, ...]) -> tuple[int, int]:
    """[start, stop) of the reduced dims: one dim (dim=..., negative allowed) or layer_norm's last ones."""
    kwargs = dict(step.kwargs)
    if step.target == "torch.nn.functional.layer_norm":
        normalized = kwargs.get("normalized_shape") or (step.args[1] if len(step.args) > 1 else None)
        count = len(normalized) if isinstance(normalized, list | tuple) else 1
        return len(shape) - count, len(shape)
    dim = kwargs.get("dim", step.args[1] if len(step.args) > 1 else None)
    if isinstance(dim, str):
        dim = int(dim) if dim.lstrip("-").isdigit() else None
    if isinstance(dim, list | tuple):
        if len(dim) != 1:
            raise RegionError(f"a reduction over dims {dim} has no contract yet")
        dim = dim[0]
    if dim is None:
        return 0, len(shape)  # over everything
    dim = int(dim) % len(shape)
    return dim, dim + 1


def _prod(dims: tuple[int, ...]) -> int:
    n = 1
    for d in dims:
        n *= d
    return n


# ---------------------------------------------------------------- contraction


def _matmul(region: Region, names: dict[str, str]) -> Contract:
    (step,) = region.steps
    out = region.output
    linear = step.target == "torch.nn.functional.linear"
    a, b, *rest = region.inputs
    if linear:
        k_dim = a.shape[-1]
        m_rows = _prod(a.shape[:-1])
        n_cols = b.shape[0]
        a_at = f"p_{names[a.name]}[m * {k_dim} + k]"
        b_at = f"p_{names[b.name]}[j * {k_dim} + k]"
        batch = 1
    else:
        if len(a.shape) < 2 or len(b.shape) < 2:
            raise RegionError(f"{region.id}: matmul of a vector has no contract yet")
        k_dim, n_cols = b.shape[-2], b.shape[-1]
        m_rows = a.shape[-2]
        batch = _prod(out.shape[:-2])
        a_batch = _prod(a.shape[:-2]) > 1
        b_batch = _prod(b.shape[:-2]) > 1
        a_at = f"p_{names[a.name]}[{'bt * ' + str(m_rows * k_dim) + ' + ' if a_batch else ''}m * {k_dim} + k]"
        b_at = (
            f"p_{names[b.name]}[{'bt * ' + str(k_dim * n_cols) + ' + ' if b_batch else ''}k * {n_cols} + j]"
        )
    kernel = f"region_{region.id}"
    an, bn = names[a.name], names[b.name]
    sig = _signature(kernel, [names[t.name] for t in region.inputs], "out", [], ["n"])
    accessors = [
        f"        auto {an} = [&](int64_t k) -> float {{ return {a_at}; }};  // {an}[.., m, k]",
        f"        auto {bn} = [&](int64_t k) -> float {{ return {b_at}; }};  // "
        + (f"{bn}[j, k]" if linear else f"{bn}[.., k, j]"),
    ]
    if rest:
        cn = names[rest[0].name]
        accessors.append(f"        const float* {cn} = p_{cn};  // {cn}[j]: the bias of column j")
    long_sum = (
        f"        // K = {k_dim} terms: accumulate in double (or in blocks of 256 partial sums)\n"
        if k_dim > LONG_SUM
        else ""
    )
    head = (
        f"{PRELUDE}\n{sig} {{\n    const int64_t M = {m_rows}, N = {n_cols}, K = {k_dim};\n{_loop('n')}"
        "        const int64_t j = i % N, m = (i / N) % M;\n"
        + ("        const int64_t bt = i / (N * M);\n" if batch > 1 else "")
        + "\n".join(accessors)
        + f"\n        // {_step_code(step, names)}\n{long_sum}        float result;  // set it\n{BODY_MARK}"
    )
    tail = "        p_out[i] = result;\n    }\n}\n"
    roles = _roles(region, names, {a.name: f" read as {an}(k)", b.name: f" read as {bn}(k)"})
    roles.insert(
        0,
        f"- each thread computes one output element (row m, column j{', batch bt' if batch > 1 else ''}"
        f") as `result`, a sum over k in [0, K), K = {k_dim}",
    )
    contract = Contract(
        region.id, "contraction", kernel, sig, head, tail, "", _launch(region, kernel, out.numel)
    )
    contract.facts = _facts(region, names, head, roles)
    return contract


def _conv(region: Region, names: dict[str, str]) -> Contract:
    """Direct convolution: one thread per output element; x(c, k...) reads the input under the filter
    tap (0 in the padding), w(c, k...) the filter; the model writes the sum over c and the taps."""
    (step,) = region.steps
    dims = _CONV[step.target]
    kwargs = dict(step.kwargs)
    if int(kwargs.get("groups", 1)) != 1:
        raise RegionError(f"{region.id}: a grouped convolution has no contract yet")
    x, w, *bias = region.inputs
    out = region.output
    spatial_in, spatial_out, taps = x.shape[2:], out.shape[2:], w.shape[2:]
    stride, padding, dilation = (
        _per_dim(kwargs.get(k, d), dims) for k, d in (("stride", 1), ("padding", 0), ("dilation", 1))
    )
    xn, wn = names[x.name], names[w.name]
    sig = _signature(f"region_{region.id}", [names[t.name] for t in region.inputs], "out", [], ["n"])
    ks = ", ".join(f"int64_t k{j}" for j in range(dims))
    coords = ["        int64_t rest = i;"]
    for j in range(dims - 1, -1, -1):
        coords.append(f"        const int64_t p{j} = rest % {spatial_out[j]}; rest /= {spatial_out[j]};")
    coords.append(f"        const int64_t o = rest % {out.shape[1]}, b = rest / {out.shape[1]};")
    taps_at = [
        f"const int64_t q{j} = p{j} * {stride[j]} - {padding[j]} + k{j} * {dilation[j]};" for j in range(dims)
    ]
    inside = " && ".join(f"q{j} >= 0 && q{j} < {spatial_in[j]}" for j in range(dims))
    x_index = f"b * {x.shape[1]} + c"
    for j in range(dims):
        x_index = f"({x_index}) * {spatial_in[j]} + q{j}"
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
    head = (
        f"{PRELUDE}\n{sig} {{\n    const int64_t C = {w.shape[1]}, {loops};\n{_loop('n')}"
        + "\n".join(coords)
        + "\n"
        + "\n".join(accessors)
        + f"\n        // {_step_code(step, names)}\n        float result;  // set it\n{BODY_MARK}"
    )
    tail = "        p_out[i] = result;\n    }\n}\n"
    taps_text = ", ".join(f"k{j} in [0, K{j})" for j in range(dims))
    tap_args = ", ".join(f"k{j}" for j in range(dims))
    roles = _roles(
        region,
        names,
        {
            x.name: f" read as {xn}(c, {tap_args}): the input under tap k of this output element, 0 in the "
            "padding",
            w.name: f" read as {wn}(c, {tap_args})",
        },
    )
    roles.insert(
        0,
        f"- each thread computes one output element (batch b, channel o) as `result`: the sum over "
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
        _launch(region, f"region_{region.id}", out.numel),
    )
    contract.facts = _facts(region, names, head, roles)
    return contract


def _per_dim(value: Any, dims: int) -> tuple[int, ...]:
    values = tuple(value) if isinstance(value, list | tuple) else (value,) * dims
    if len(values) != dims or not all(isinstance(v, int) for v in values):
        raise RegionError(f"convolution argument {value!r} has no contract (expected {dims} integers)")
    return values
