"""Prologue fusion: a map region whose every reader is one reduction runs inside that reduction's kernel,
computed at each element the reduction reads, so the map's output never makes a round trip through memory
and its kernel never launches (a vector norm's `x * x`, a loss's `(a - b) ** 2` before its mean).

Inductor's rule is the anchor: pointwise work joins the kernel that reads it, as a reduction's prologue.
Nothing here asks the model: both bodies are the ones written and checked on their own contracts. The
map's body becomes a device function of its output's flat index (its inputs loaded there as its first
contract loads them, then the body, returning its last step), and every read of the map's output in the
reduction's kernel, `p_t0[index]` (its accessors read through nothing else), calls that function at the
same index. A pair fuses only where the assembled kernel reads the map's output by index alone and NVRTC
compiles it; otherwise both keep their own kernels. The fused kernel is judged against the two regions'
PyTorch lines together, and the map's kernel is still judged alone, so a wrong value is laid at the right
body's door.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import NamedTuple

import torch

from evaluator.regions.nvrtc import compile_kernel
from regions.contract import Contract
from regions.export import Written
from regions.model import Region, TensorInfo
from regions.pointwise import preloaded
from regions.skeleton import c_names, kernel_params
from regions.trace import Traced

# The kinds whose kernel takes a map's steps at the elements it reads
READERS = frozenset({"reduce"})


class Fused(NamedTuple):
    """The kernels a program calls, the maps fused into them (their kernels loaded for their own check
    only), and which maps each reader took (reader id -> map ids)."""

    program: list[Written]
    alone: list[Written]
    into: dict[str, list[str]]


def prologues(traced: Traced, regions: Sequence[Region]) -> dict[str, str]:
    """Map id -> the id of the reduction it can run inside: the map's output is read by that region's nodes
    alone (not by PyTorch, another region or the model's output)."""
    nodes = {n.name: n for n in traced.gm.graph.nodes}
    maps = {r.output.name: r.id for r in regions if r.kind == "map"}
    out = {}
    for reader in regions:
        if reader.kind not in READERS:
            continue
        for tensor in reader.inputs:
            if tensor.name in maps and read_only_by(nodes[tensor.name], reader):
                out[maps[tensor.name]] = reader.id
    return out


def read_only_by(node: torch.fx.Node, region: Region) -> bool:
    """Whether every user of a tensor is one of the region's nodes (not PyTorch, another region or the
    model's output), so the region's kernel may compute it instead of reading it."""
    inside = set(region.nodes)
    return bool(node.users) and all(user.name in inside for user in node.users)


def fused_prologues(traced: Traced, written: Sequence[Written]) -> Fused:
    """Each written map that can run inside a written reduction (`prologues`) fused into it, where the
    pair fuses."""
    by_id = {w.region.id: w for w in written}
    joins = prologues(traced, [w.region for w in written])
    alone: list[Written] = []
    into: dict[str, list[str]] = {}
    program: list[Written] = []
    for reader in written:
        fused = reader
        for producer in (by_id[m] for m, r in joins.items() if r == reader.region.id):
            joined = absorb(fused, producer)
            if joined is not None:
                fused = joined
                alone.append(producer)
                into.setdefault(reader.region.id, []).append(producer.region.id)
        program.append(fused)
    gone = {w.region.id for w in alone}
    return Fused([w for w in program if w.region.id not in gone], alone, into)


def absorb(reader: Written, producer: Written) -> Written | None:
    """`reader` with `producer`'s map computed at each element it reads of the map's output; None where the
    reader's kernel reads that output other than by index (`p_t0[...]`) or the fused kernel does not
    compile."""
    tensor = producer.region.output
    contract = reader.contract
    pointers = kernel_pointers(contract)
    pointer = pointers.get(tensor.name)
    if pointer is None or re.search(rf"\b{pointer}\b", reader.body):  # the body reads memory itself
        return None
    new_inputs = [t for t in producer.region.inputs if t.name not in pointers]
    new_scalars = [s for s in producer.region.scalars if s[0] not in {n for n, _ in reader.region.scalars}]
    arguments = _arguments(pointers, producer.region, new_inputs)
    function = map_function(producer)
    signature = _signature(contract.signature, pointer, new_inputs, new_scalars, producer.region)
    at = contract.head.index(contract.signature)
    head = contract.head[:at] + function.code + signature + contract.head[at + len(contract.signature) :]
    call, rest = f"{function.name}(", f", {arguments})"
    head, tail = _indexed(head, pointer, call, rest), _indexed(contract.tail, pointer, call, rest)
    if head is None or tail is None:
        return None
    launch = dict(contract.launch)
    launch["inputs"] = [n for n in launch["inputs"] if n != tensor.name] + [t.name for t in new_inputs]
    launch["scalars"] = [*launch["scalars"], *(name for name, _ in new_scalars)]
    fused = replace(contract, signature=signature, head=head, tail=tail, launch=launch)
    if not compile_kernel(fused.assemble(reader.body), name=f"{contract.kernel_name}.cu").ok:
        return None
    region = reader.region
    tensors = {t.name: t for t in [*region.inputs, *new_inputs]}
    joined = Region(
        region.id,
        region.kind,
        producer.region.nodes + region.nodes,
        [tensors[name] for name in launch["inputs"]],  # the judge passes them in the launch's order
        region.output,
        producer.region.steps + region.steps,
        region.scalars + new_scalars,
        region.cost + producer.region.cost,
    )
    return Written(joined, fused, reader.body)


class Function(NamedTuple):
    """A map body as a device function of its output's flat index i: its name and its code."""

    name: str
    code: str


def map_function(producer: Written, values: frozenset[str] = frozenset()) -> Function:
    """The map's body as `kg_map_<id>(i, inputs..., scalars...)`: each input a pointer read at its
    broadcast index of element i, as the map's first contract loads it, or (named in `values`) a float the
    caller has (a row's statistic, regions.row_maps)."""
    region = producer.region
    names = c_names(region)
    name = f"kg_map_{region.id}"
    params = ["int64_t i"] + [
        f"float {names[t.name]}" if t.name in values else f"const float* __restrict__ p_{names[t.name]}"
        for t in region.inputs
    ]
    params += [f"float {names[s]}" for s, _ in region.scalars]
    loaded = [t for t in region.inputs if t.name not in values]
    dims, loads = preloaded(loaded, region.output.shape, names, "        ")
    body = "\n".join(
        ("        " + line.strip()) if line.strip() else "" for line in producer.body.strip("\n").splitlines()
    )
    code = (
        f"// region {region.id} (a map) at element i of its output\n"
        f"__device__ __forceinline__ float {name}({', '.join(params)}) {{\n{dims}{loads}{body}\n"
        f"        return t{len(region.steps)};\n}}\n\n"
    )
    return Function(name, code)


def kernel_pointers(contract: Contract) -> dict[str, str]:
    """Tensor name -> the kernel's pointer parameter for it: the signature's pointers are the launch's
    inputs, in order."""
    params = kernel_params(contract.signature)
    names = [p.rsplit(" ", 1)[1] for p in params if p.startswith("const float*")]
    return dict(zip(contract.launch["inputs"], names, strict=True))


def _arguments(pointers: dict[str, str], producer: Region, new_inputs: list[TensorInfo]) -> str:
    """The call's arguments after the index: the map's inputs by the fused kernel's pointer names (a tensor
    the reader also reads keeps the reader's pointer), then its scalars."""
    fresh = {t.name: f"p_kg_{producer.id}_{k}" for k, t in enumerate(new_inputs)}
    pointers = [fresh.get(t.name) or pointers[t.name] for t in producer.inputs]
    own = c_names(producer)  # a scalar keeps its own name in every region
    scalars = [own[s] for s, _ in producer.scalars]
    return ", ".join(pointers + scalars)


def _signature(
    signature: str,
    pointer: str,
    new_inputs: list[TensorInfo],
    new_scalars: list[tuple[str, float]],
    producer: Region,
) -> str:
    """The reader's signature without the map's output, with the map's other inputs after its own inputs
    and its other scalars after its own scalars (the launch's argument order)."""
    params = [p for p in kernel_params(signature) if not p.endswith(f" {pointer}")]
    out = next(k for k, p in enumerate(params) if not p.startswith("const float*"))
    fresh = [f"const float* __restrict__ p_kg_{producer.id}_{k}" for k in range(len(new_inputs))]
    params[out:out] = fresh
    count = next(k for k, p in enumerate(params) if p.startswith("int64_t "))
    own = c_names(producer)
    params[count:count] = [f"float {own[s]}" for s, _ in new_scalars]
    return f"{signature[: signature.index('(') + 1]}{', '.join(params)})"


def _indexed(code: str, pointer: str, call: str, rest: str) -> str | None:
    """Every `pointer[index]` in `code` as `call index rest`; None where the pointer is read otherwise."""
    out, at = [], 0
    pattern = re.compile(rf"\b{re.escape(pointer)}\b")
    while (found := pattern.search(code, at)) is not None:
        start = found.end()
        if code[start : start + 1] != "[":
            return None
        depth, end = 0, start
        while end < len(code):
            depth += {"[": 1, "]": -1}.get(code[end], 0)
            if depth == 0:
                break
            end += 1
        if depth:
            return None
        out.append(code[at : found.start()] + call + code[start + 1 : end] + rest)
        at = end + 1
    out.append(code[at:])
    return "".join(out)
