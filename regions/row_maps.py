"""Row maps: a map that reads one value per row of reductions (a norm's sum, a mean and a variance) runs
in those reductions' kernel, after them, at every element of the row, so the row is read again while it is
still in cache and the statistics never make a round trip (`x / x.abs().sum(1, keepdim=True)`, an instance
or group norm written as mean, variance and `(x - mean) * rstd`).

Inductor's rule is the anchor: a pointwise consumer of a reduction over the same rows joins its kernel.
Nothing here asks the model: every body is the one written and checked on its own contract. Each
reduction's kernel (a block a row: block_row, block_fold) becomes a device function of the row that every
thread of the block leaves with the row's value (its store `p_out[i] = v` kept in shared memory instead);
the map's body becomes a device function of the element (regions.prologue.map_function) that takes those
values as floats. The kernel the framework writes calls the reductions, then runs the map over the row's
elements in strided shares and stores them. A reduction of one thread a row (short rows, its first
contract) keeps its kernel, and the thread that folds a row writes the map over it. A group fuses only
where every reduction runs a block a row (or, alone, one thread a row) over the same rows of the same
shape, the map's output has the reduced tensor's shape and reads each value at the element's own row,
and NVRTC compiles the kernel; otherwise every kernel stays apart. The
fused kernel is judged against all of the regions' PyTorch lines under the map's id; each reduction's own
kernel is still judged alone.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from evaluator.regions.nvrtc import compile_kernel
from regions.contract import Contract
from regions.export import Written
from regions.library import PRELUDE
from regions.model import Region, TensorInfo
from regions.partition import REDUCE
from regions.prologue import Function, kernel_pointers, map_function, read_only_by
from regions.rows import Rows, reduced_dims, rows_of
from regions.skeleton import kernel_params, signature_line
from regions.trace import Traced

_STORED = re.compile(r"\bp_out\[i\] = ([^;]*);")  # a reduction's store of its row's value
_LAMBDA = re.compile(r"\[&\]\([^)]*\)\s*->\s*[\w&]+\s*\{")


class RowMaps(NamedTuple):
    """The kernels a program calls, each map over reduced rows fused with its reductions, the reductions
    so absorbed (loaded for their own check only), and which reductions each map took (map id -> ids)."""

    program: list[Written]
    alone: list[Written]
    into: dict[str, list[str]]


def fused_row_maps(traced: Traced, written: Sequence[Written]) -> RowMaps:
    """Each written map whose reduction inputs are read by it alone, fused with them where they fit."""
    nodes = {n.name: n for n in traced.gm.graph.nodes}
    by_output = {w.region.output.name: w for w in written if w.region.kind == "reduce"}
    alone: list[Written] = []
    into: dict[str, list[str]] = {}
    fused: dict[str, Written] = {}
    for m in written:
        if m.region.kind != "map":
            continue
        stats = [by_output[t.name] for t in m.region.inputs if t.name in by_output]
        if not stats or not all(read_only_by(nodes[s.region.output.name], m.region) for s in stats):
            continue
        joined = row_map(m, stats)
        if joined is not None:
            fused[m.region.id] = joined
            alone += stats
            into[m.region.id] = [s.region.id for s in stats]
    gone = {w.region.id for w in alone}
    program = [fused.get(w.region.id, w) for w in written if w.region.id not in gone]
    return RowMaps(program, alone, into)


def row_map(m: Written, stats: list[Written]) -> Written | None:
    """The map with its reductions in one kernel; None where they do not fit (see the module's doc)."""
    rows = _rows(stats, m.region)
    if rows is None:
        return None
    layout, blocks = rows
    values = frozenset(s.region.output.name for s in stats)
    function = map_function(m, values)
    built = (
        _block_kernel(m, stats, layout, function) if blocks else _thread_kernel(m, stats[0], layout, function)
    )
    if built is None:
        return None
    contract, tensors = built
    if not compile_kernel(contract.head, name=f"{contract.kernel_name}.cu").ok:
        return None
    region = Region(
        m.region.id,
        "reduce",
        [n for s in stats for n in s.region.nodes] + m.region.nodes,
        tensors,
        m.region.output,
        [step for s in stats for step in s.region.steps] + m.region.steps,
        list({n: v for r in (*stats, m) for n, v in r.region.scalars}.items()),
        sum(w.region.cost for w in (*stats, m)),
    )
    return Written(region, contract, "")


def _block_kernel(
    m: Written, stats: list[Written], layout: Rows, function: Function
) -> tuple[Contract, list[TensorInfo]] | None:
    """Reductions of a block a row: each a device function every thread leaves with the row's value, then
    the block's threads run the map over the row's elements in strided shares."""
    pieces = [_row_function(s) for s in stats]
    if any(p is None for p in pieces):
        return None
    values = frozenset(s.region.output.name for s in stats)
    tensors = _tensors([*(s.region for s in stats), m.region], values)
    scalars = list(dict.fromkeys(n for r in (*(s.region for s in stats), m.region) for n, _ in r.scalars))
    pointer = {t.name: f"p_kg_in{k}" for k, t in enumerate(tensors)}
    kernel = f"region_{m.region.id}"
    signature = signature_line(
        kernel, [pointer[t.name].removeprefix("p_") for t in tensors], "out", scalars, ["n"]
    )
    calls = "".join(
        f"    const float kg_v{k} = {name}({', '.join(_args(s.contract, pointer) + ['n'])});\n"
        for k, (s, (name, _)) in enumerate(zip(stats, pieces, strict=True))
    )
    value_of = {s.region.output.name: f"kg_v{k}" for k, s in enumerate(stats)}
    threads = stats[0].contract.launch["block"][0]
    body = (
        f"{signature} {{\n{calls}"
        f"    const int64_t i = blockIdx.x;  // row i; its values are every thread's now\n"
        f"    const int64_t base = {layout.base};\n"
        f"    for (int64_t k = threadIdx.x; k < {layout.length}; k += {threads}) {{\n"
        f"        const int64_t kg_e = base + {layout.at('k')};  // the row's k-th element\n"
        f"        p_out[kg_e] = {_call(m, function, pointer, value_of)};\n    }}\n}}\n"
    )
    source = f"{PRELUDE}\n" + "".join(code for _, code in pieces) + function.code + body
    launch = _launch(m, kernel, tensors, scalars, layout.rows)
    launch |= {"block": [threads, 1, 1], "grid": [layout.rows, 1, 1]}
    return Contract(m.region.id, "reduce", kernel, signature, source, "", "", launch), tensors


def _thread_kernel(
    m: Written, stat: Written, layout: Rows, function: Function
) -> tuple[Contract, list[TensorInfo]] | None:
    """A reduction of one thread a row (its first contract: short rows, many of them): its kernel as it
    is, the row's value kept where it stored it, and the same thread runs the map over the row's
    elements (neighbouring threads hold neighbouring rows, so each element's store is coalesced where the
    row's elements are strided)."""
    parts = _kernel_parts(stat)
    if parts is None:
        return None
    before, after = parts
    own = stat.contract.launch["inputs"]
    pointer = kernel_pointers(stat.contract)
    extra = [t for t in m.region.inputs if t.name not in pointer and t.name != stat.region.output.name]
    pointer |= {t.name: f"p_kg_in{k}" for k, t in enumerate(extra)}
    scalars = list(stat.contract.launch["scalars"])
    scalars += [n for n, _ in m.region.scalars if n not in scalars]
    kernel = f"region_{m.region.id}"
    pointers = [pointer[name].removeprefix("p_") for name in [*own, *(t.name for t in extra)]]
    new_signature = signature_line(kernel, pointers, "out", scalars, ["n"])
    value_of = {stat.region.output.name: "kg_v0"}
    loop = (
        "{\n            const float kg_v0 = \\1;  // the row's value\n"
        f"            const int64_t kg_base = {layout.base};\n"
        f"            for (int64_t kg_k = 0; kg_k < {layout.length}; ++kg_k) {{\n"
        f"                const int64_t kg_e = kg_base + {layout.at('kg_k')};  // the row's k-th element\n"
        f"                p_out[kg_e] = {_call(m, function, pointer, value_of)};\n"
        "            }\n        }"
    )
    head = f"{PRELUDE}\n{function.code}{before}{new_signature}{_STORED.sub(loop, after)}"
    tensors = [next(t for t in stat.region.inputs if t.name == fx) for fx in own] + extra
    launch = _launch(m, kernel, tensors, scalars, layout.rows)
    return Contract(m.region.id, "reduce", kernel, new_signature, head, "", "", launch), tensors


def _call(m: Written, function: Function, pointer: dict[str, str], value_of: dict[str, str]) -> str:
    """The map's function at element kg_e: its inputs by the kernel's pointers or the rows' values."""
    args = [value_of.get(t.name) or pointer[t.name] for t in m.region.inputs]
    return f"{function.name}(kg_e, {', '.join(args + [s for s, _ in m.region.scalars])})"


def _launch(m: Written, kernel: str, tensors: list[TensorInfo], scalars: list[str], rows: int) -> dict:
    return {
        "kernel": kernel,
        "inputs": [t.name for t in tensors],
        "output": m.region.output.name,
        "output_shape": list(m.region.output.shape),
        "scalars": scalars,
        "count": rows,
    }


def _rows(stats: list[Written], m: Region) -> tuple[Rows, bool] | None:
    """The rows every reduction folds and whether they run a block a row (else one thread a row, one
    reduction alone), where they are one layout of one tensor shape that the map's output has and the map
    reads each value at its element's row."""
    layouts = []
    for s in stats:
        step = next((st for st in s.region.steps if st.target in REDUCE), None)
        launch = s.contract.launch
        if step is None or launch.get("zero"):
            return None
        shape = _shape(s.region, step.args[0])
        if shape != tuple(m.output.shape):
            return None
        layout = rows_of(step, shape)
        if launch["count"] != layout.rows:
            return None
        if "block" in launch and launch["grid"] != [layout.rows, 1, 1]:
            return None  # split rows: no block holds a whole row
        kept = [1 if d in reduced_dims(step, shape) else size for d, size in enumerate(shape)]
        out = tuple(s.region.output.shape)
        if tuple([1] * (len(shape) - len(out)) + list(out)) != tuple(kept):
            return None  # the map would read the value at another element than its row's
        layouts.append((layout, tuple(launch.get("block", ()))))
    if len(set(layouts)) != 1 or (not layouts[0][1] and len(stats) > 1):
        return None
    return layouts[0][0], bool(layouts[0][1])


def _shape(region: Region, name: str) -> tuple[int, ...] | None:
    """The shape of a tensor a region reads: one of its inputs, or a step's output (a map fused before
    the reduction)."""
    known = {t.name: t.shape for t in region.inputs} | {st.out.name: st.out.shape for st in region.steps}
    shape = known.get(name)
    return tuple(shape) if shape is not None else None


def _row_function(s: Written) -> tuple[str, str] | None:
    """A block-a-row reduction's kernel as `kg_row_<id>(inputs..., scalars..., n)`, which every thread of
    the block leaves with the row's value; None where its kernel stores other than once at `p_out[i]`, or
    returns early."""
    parts = _kernel_parts(s)
    if parts is None or re.search(r"\breturn\b", _without_lambdas(parts[1])):
        return None
    before, after = parts
    name = f"kg_row_{s.region.id}"
    params = [p for p in kernel_params(s.contract.signature) if not p.endswith(" p_out")]
    opened = after.index("{") + 1
    closed = after.rindex("}")
    inner = _STORED.sub(r"kg_row_value = \1;", after[opened:closed])
    function = (
        f"{before}// region {s.region.id} (a reduction): each of the block's threads gets the row's value\n"
        f"__device__ __forceinline__ float {name}({', '.join(params)}) {{\n"
        f"    __shared__ float kg_row_value;\n{inner}    __syncthreads();\n    return kg_row_value;\n}}\n\n"
    )
    return name, function


def _kernel_parts(s: Written) -> tuple[str, str] | None:
    """A reduction's assembled source cut at its kernel's signature: what sits between the prelude and
    the kernel (a map fused into it, regions.prologue) and the kernel's body; None where its output is not
    float or it touches `p_out` other than by its one store `p_out[i] = v;`."""
    source = s.contract.assemble(s.body)
    signature = s.contract.signature
    if (
        not source.startswith(PRELUDE)
        or signature not in source
        or "float* __restrict__ p_out" not in signature
    ):
        return None
    before, after = source[len(PRELUDE) :].split(signature, 1)
    if len(_STORED.findall(after)) != 1 or after.count("p_out") != 1:
        return None
    return before, after


def _without_lambdas(code: str) -> str:
    """The code with every accessor's body (`[&](int64_t k) -> float { ... }`) cut out: a `return` there
    leaves the accessor, not the kernel."""
    out, at = [], 0
    for found in _LAMBDA.finditer(code):
        if found.start() < at:
            continue
        depth, end = 0, found.end() - 1
        while end < len(code):
            depth += {"{": 1, "}": -1}.get(code[end], 0)
            if depth == 0:
                break
            end += 1
        out.append(code[at : found.start()])
        at = end + 1
    return "".join(out) + code[at:]


def _args(contract: Contract, pointer: dict[str, str]) -> list[str]:
    return [pointer[name] for name in contract.launch["inputs"]] + list(contract.launch["scalars"])


def _tensors(regions: list[Region], values: frozenset[str]) -> list[TensorInfo]:
    """Every tensor the group reads from outside it, once, in order of first reader."""
    seen: dict[str, TensorInfo] = {}
    for region in regions:
        for t in region.inputs:
            if t.name not in values:
                seen.setdefault(t.name, t)
    return list(seen.values())
