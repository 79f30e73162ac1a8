"""Export: region kernels spliced into the reference's graph, as a program any harness can judge.

`ModelNew` is the traced reference with each written region's nodes replaced by one call of its kernel:
the reference's own class (renamed) builds the same parameters under the same seed, `ModelNew` adopts its
submodules, parameters and buffers, and its forward is torch.fx's code of the edited graph (Python numbers
the reference kept as attributes are constants there), calling the kernels directly. With the
`load_inline` launcher each kernel sits in an extension whose host function the framework writes from the
contract (inputs made contiguous, the output allocated with the traced shape, a grid-stride launch on
torch's current stream): a standalone KernelBench program. With `nvrtc` it is the evaluator's region kind.
"""

from __future__ import annotations

import ast
import copy
import hashlib
import re
import textwrap
from collections.abc import Sequence
from typing import Any, Literal, NamedTuple

import torch

from evaluator.problem import Problem
from regions.contract import Contract
from regions.model import Region, RegionError
from regions.trace import Traced, trace_source

REGION_MODULE = "kg_region"
THREADS = 256


Launcher = Literal["load_inline", "nvrtc"]
LAUNCHERS: tuple[Launcher, ...] = ("load_inline", "nvrtc")


class Written(NamedTuple):
    """One region with the kernel body the model wrote for it."""

    region: Region
    contract: Contract
    body: str


def export_program(
    problem: Problem,
    written: Sequence[Written],
    launcher: Launcher = "load_inline",
    alone: Sequence[Written] = (),
) -> str:
    """The whole candidate program (a fenced-free Python module defining ModelNew): the reference's graph
    with each written region replaced by one call of its kernel (one extension or module per region).

    `load_inline` gives the standalone KernelBench program any harness can judge (an nvcc build);
    `nvrtc` gives the evaluator's region kind, which compiles in milliseconds (evaluator.regions.launch).
    `alone`: kernels the program loads but forward never calls (a region fused into another's kernel,
    regions.prologue and regions.row_maps, still judged by itself: the evaluator's region kind only).
    """
    if launcher not in LAUNCHERS:
        raise ValueError(f"launcher must be one of {LAUNCHERS}, not {launcher!r}")
    if not written:
        raise RegionError("no region to export")
    code, wrapped = _spliced_forward(trace_source(problem.source), [w.region for w in written])
    for w in written:
        code = code.replace(f"self.{_call_name(w.region)}(", f"{_ext_name(w.region)}.{_launch(w.contract)}(")
    forward = textwrap.indent(_indexed_children(code).strip("\n"), "    ")
    loader = _nvrtc_loader if launcher == "nvrtc" else _load_inline_loader
    importing = (
        "from evaluator.regions.launch import load_region_kernel"
        if launcher == "nvrtc"
        else "from torch.utils.cpp_extension import load_inline"
    )
    if alone and launcher != "nvrtc":
        raise ValueError("kernels judged alone are the evaluator's region kind's (launcher 'nvrtc')")
    loading = "".join(loader(*w) for w in [*written, *alone])
    ids = ", ".join(w.region.id for w in written)
    return f'''import torch
import torch.nn as nn
{importing}{wrapped}

{_reference_class(problem.source)}
{loading}

class ModelNew(nn.Module):
    """The reference's graph with region(s) {ids} computed by custom kernels."""

    def __init__(self, *args, **kwargs):
        super().__init__()
        reference = _KgReference(*args, **kwargs)
        for name, module in reference.named_children():
            self.add_module(name, module)
        for name, param in reference.named_parameters(recurse=False):
            self.register_parameter(name, param)
        for name, buffer in reference.named_buffers(recurse=False):
            self.register_buffer(name, buffer)

{forward}
'''


def region_markers(written: Sequence[Written]) -> list[dict[str, Any]]:
    """A job line's `regions` for a program of the nvrtc launcher (evaluator.jobs): what the worker needs
    to judge each kernel alone against its region's PyTorch lines."""
    return [
        {
            "id": w.region.id,
            "module": _ext_name(w.region),
            "launch": _launch(w.contract),
            "spec": w.region.to_dict(),
        }
        for w in written
    ]


def _ext_name(region: Region) -> str:
    return f"_kg_ext_{region.id}"


def _call_name(region: Region) -> str:
    return f"{REGION_MODULE}_{region.id}"


def _launch(contract: Contract) -> str:
    return f"{contract.kernel_name}_launch"


def _source_constant(region: Region, cuda: str) -> tuple[str, str, str]:
    """The module constant that holds a region's CUDA source: its name, its definition, and a content key
    (a changed kernel gets a new build name, so no cache ever serves the old one)."""
    name = f"_KG_CUDA_{region.id}"
    # Model text enters the program only inside this literal, escaped: a body holding quotes or
    # backslashes (`""" + <python> + r"""` in a comment) cannot end the string and become code.
    literal = cuda.replace("\\", "\\\\").replace('"', '\\"')
    definition = f'''
{name} = """
{literal}"""
'''
    return name, definition, hashlib.sha256(cuda.encode()).hexdigest()[:12]


def _load_inline_loader(region: Region, contract: Contract, body: str) -> str:
    """A load_inline extension with the kernel and the host function the framework writes."""
    source, definition, key = _source_constant(region, _cuda_source(contract, body))
    return f'''{definition}
{_ext_name(region)} = load_inline(
    name="kg_{region.id}_{key}",
    cpp_sources="{_declaration(contract)};",
    cuda_sources={source},
    functions=["{_launch(contract)}"],
    extra_cuda_cflags=["-O3"],
)
'''


def _nvrtc_loader(region: Region, contract: Contract, body: str) -> str:
    """The kernel alone, compiled by NVRTC when the program loads."""
    source, definition, key = _source_constant(region, contract.assemble(body))
    info = contract.launch
    return f'''{definition}
{_ext_name(region)} = load_region_kernel(
    name="kg_{region.id}_{key}",
    source={source},
    kernel="{contract.kernel_name}",
    launch="{_launch(contract)}",
    n_inputs={len(info["inputs"])},
    n_scalars={len(info["scalars"])},
    output_shape={tuple(int(d) for d in info["output_shape"])!r},
    count={int(info["count"])},{_shape_args(info)}{_dtype_arg(info)}
)
'''


def _dtype_arg(info: dict[str, Any]) -> str:
    """An index reduction's int64 output (every other region writes float32, the loader's default)."""
    return f'\n    output_dtype="{info["output_dtype"]}",' if "output_dtype" in info else ""


def _shape_args(info: dict[str, Any]) -> str:
    """The launch shape's fixed blocks and grid, where the contract has one (regions.shapes)."""
    if "block" not in info:
        return ""
    zero = "\n    zero=True," if info.get("zero") else ""  # its blocks add into the output
    return f"\n    block={tuple(info['block'])!r},\n    grid={tuple(info['grid'])!r},{zero}"


def _spliced_forward(traced: Traced, regions: Sequence[Region]) -> tuple[str, str]:
    """fx's code for forward, each region's nodes replaced by `self.kg_region_<id>(inputs..., scalars...)`,
    and the imports of the functions fx kept whole under its own names (einops' `rearrange` is called as
    `einops_einops_rearrange`).

    Regions are spliced one after another; a region that reads another's output reads the call that now
    produces it."""
    gm = copy.deepcopy(traced.gm)  # the trace is shared (trace_source); splicing changes the graph
    produced: dict[str, torch.fx.Node] = {}  # a spliced region's output name -> the call producing it
    for region in regions:
        nodes = {n.name: n for n in gm.graph.nodes}
        operands = [*(t.name for t in region.inputs), *(s for s, _ in region.scalars)]
        missing = [name for name in region.nodes if name not in nodes]  # spliced already, or never traced
        missing += [name for name in operands if name not in nodes and name not in produced]
        if missing:
            raise RegionError(f"{region.id}: nodes {missing} are not in the traced graph")
        members = [nodes[name] for name in region.nodes]
        order = list(gm.graph.nodes)
        last = max(members, key=order.index)
        args = tuple(produced.get(name) or nodes[name] for name in operands)
        gm.add_submodule(_call_name(region), torch.nn.Module())
        with gm.graph.inserting_after(last):
            call = gm.graph.call_module(_call_name(region), args)
        last.replace_all_uses_with(call)
        produced[last.name] = call
        for node in reversed(list(gm.graph.nodes)):
            if node.name in region.nodes:
                if node.users:
                    raise RegionError(f"{region.id}: {node.name} is read outside the region")
                gm.graph.erase_node(node)
    for node in gm.graph.nodes:
        if node.op in ("placeholder", "output"):
            node.type = None  # fx renders annotations as its own globals (`_torch_Tensor_`), undefined here
    gm.graph.lint()
    gm.recompile()
    code = re.sub(r"(?m)^torch\.fx\._symbolic_trace\.wrap\(.*\)\n", "", gm.code)  # fx's own registry
    return code, _wrapped_imports(gm)


def _wrapped_imports(gm: torch.fx.GraphModule) -> str:
    """`from einops.einops import rearrange as einops_einops_rearrange` for each such name the code reads,
    and the float constants fx names (`masked_fill(t7, -inf)` reads fx's global `inf`)."""
    lines = []
    for name, value in sorted(gm.graph.python_code(root_module="self").globals.items()):
        if isinstance(value, float) and re.search(rf"(?<![\w.]){name}(?!\w)", gm.code):
            lines.append(f"\n{name} = float({str(value)!r})")
            continue
        module = getattr(value, "__module__", "") or ""
        if callable(value) and module.split(".")[0] not in ("torch", "builtins", "") and name in gm.code:
            lines.append(f"\nfrom {module} import {value.__name__} as {name}")
    return "".join(lines)


def _indexed_children(code: str) -> str:
    """`getattr(self.layers, "0")` -> `self.layers[0]`: the same child, without a call the evaluator's
    static checks refuse in candidates."""
    pattern = re.compile(r'getattr\((self(?:\.\w+|\[\d+\])*), "(\d+)"\)')
    while pattern.search(code):
        code = pattern.sub(r"\1[\2]", code)
    return code


def _reference_class(source: str) -> str:
    """The problem's module text with `Model` renamed and its input functions dropped (ModelNew's file
    defines neither: a harness brings its own)."""
    tree = ast.parse(source)
    lines = source.splitlines()
    drop: set[int] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in ("get_inputs", "get_init_inputs"):
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            drop.update(range(start - 1, node.end_lineno or node.lineno))
    kept = "\n".join(line for i, line in enumerate(lines) if i not in drop)
    renamed = re.sub(r"\bModel\b", "_KgReference", kept)
    return renamed.strip()


def _declaration(contract: Contract) -> str:
    params = [f"torch::Tensor {_arg(name)}" for name in contract.launch["inputs"]]
    params += [f"double {_arg(name)}" for name in contract.launch["scalars"]]
    return f"torch::Tensor {contract.kernel_name}_launch({', '.join(params)})"


def _cuda_source(contract: Contract, body: str) -> str:
    """The kernel as the contract assembles it, then the host function that launches it."""
    inputs, scalars = contract.launch["inputs"], contract.launch["scalars"]
    shape = ", ".join(str(d) for d in contract.launch["output_shape"])
    lines = [f"    auto {_arg(n)}_c = {_arg(n)}.contiguous();" for n in inputs]
    lines += [
        f"    TORCH_CHECK({_arg(n)}_c.is_cuda() && {_arg(n)}_c.scalar_type() == torch::kFloat32, "
        f'"{n} must be a float32 CUDA tensor");'
        for n in inputs
    ]
    first = (
        f"{_arg(inputs[0])}_c.options()" if inputs else "torch::dtype(torch::kFloat32).device(torch::kCUDA)"
    )
    indices = contract.launch.get("output_dtype") == "int64"
    if indices:
        first += ".dtype(torch::kLong)"
    fill = "zeros" if contract.launch.get("zero") else "empty"  # a split sum's blocks add into it
    pointers = [f"{_arg(n)}_c.data_ptr<float>()" for n in inputs]
    pointers += ["out.data_ptr<int64_t>()" if indices else "out.data_ptr<float>()"]
    pointers += [f"(float){_arg(n)}" for n in scalars] + ["n"]
    host = "\n".join(
        [
            f"{_declaration(contract)} {{",
            *lines,
            f"    auto out = torch::{fill}({{{shape}}}, {first});",
            f"    const int64_t n = {contract.launch['count']};",
            *_host_shape(contract.launch),
            f"    {contract.kernel_name}<<<grid, block, 0,",
            "        c10::cuda::getCurrentCUDAStream()>>>(",
            f"        {', '.join(pointers)});",
            "    C10_CUDA_KERNEL_LAUNCH_CHECK();",
            "    return out;",
            "}",
        ]
    )
    headers = ("torch/extension.h", "c10/cuda/CUDAStream.h", "c10/cuda/CUDAException.h")
    includes = "".join(f"#include <{h}>\n" for h in headers)
    return f"{includes}{contract.assemble(body)}\n{host}\n"


def _host_shape(info: dict[str, Any]) -> list[str]:
    """The host function's grid and block: the shape's own, else a grid-stride loop's."""
    if "block" in info:
        return [
            "    const dim3 grid({}, {}, {});".format(*info["grid"]),
            "    const dim3 block({}, {}, {});".format(*info["block"]),
        ]
    return [
        f"    const dim3 grid((unsigned)std::min<int64_t>((n + {THREADS - 1}) / {THREADS}, 1 << 20));",
        f"    const dim3 block({THREADS});",
    ]


def _arg(name: str) -> str:
    """A C++ parameter name for a tensor or scalar (the kernel's own names are the contract's)."""
    return "a_" + re.sub(r"\W", "_", name)
