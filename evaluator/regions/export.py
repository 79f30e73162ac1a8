"""Export: a region kernel as a standalone KernelBench-format program, so any harness can judge it.

`ModelNew` is the traced reference with the region's nodes replaced by one call of the kernel: the
reference's own class (renamed) builds the same parameters under the same seed, `ModelNew` adopts its
submodules, parameters and buffers, and its forward is torch.fx's code of the edited graph (Python
numbers the reference kept as attributes are constants there), calling the extension directly.
The kernel is wrapped in a `load_inline` extension whose host function the framework writes from the
contract: inputs made contiguous, the output allocated with the traced shape, a grid-stride launch on
torch's current stream.
"""

from __future__ import annotations

import ast
import hashlib
import re
import textwrap
from typing import Any, Literal

import torch

from evaluator.problem import Problem
from evaluator.regions.contract import Contract
from evaluator.regions.model import Region, RegionError
from evaluator.regions.trace import Traced, trace_problem

REGION_MODULE = "kg_region"
THREADS = 256


Launcher = Literal["load_inline", "nvrtc"]
LAUNCHERS: tuple[Launcher, ...] = ("load_inline", "nvrtc")


def export_program(
    problem: Problem, region: Region, contract: Contract, body: str, launcher: Launcher = "load_inline"
) -> str:
    """The whole candidate program (a fenced-free Python module defining ModelNew) for one region body.

    `load_inline` gives the standalone KernelBench program any harness can judge (an nvcc build);
    `nvrtc` gives the evaluator's region kind, which compiles in milliseconds (evaluator.regions.launch).
    """
    if launcher not in LAUNCHERS:
        raise ValueError(f"launcher must be one of {LAUNCHERS}, not {launcher!r}")
    traced = trace_problem(problem)
    launch = f"{contract.kernel_name}_launch"
    code = _spliced_forward(traced, region).replace(f"self.{REGION_MODULE}(", f"_kg_ext.{launch}(")
    forward = textwrap.indent(_indexed_children(code).strip("\n"), "    ")
    loader = _nvrtc_loader if launcher == "nvrtc" else _load_inline_loader
    importing, loading = loader(region, contract, body)
    return f'''import torch
import torch.nn as nn
{importing}

{_reference_class(problem.source)}
{loading}

class ModelNew(nn.Module):
    """The reference's graph with region {region.id} computed by the custom kernel."""

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


def region_marker(region: Region, contract: Contract) -> dict[str, Any]:
    """A job line's `region` for a program of the nvrtc launcher (evaluator.jobs): what the worker needs to
    judge the kernel alone against the region's PyTorch lines."""
    return {"id": region.id, "launch": f"{contract.kernel_name}_launch", "spec": region.to_dict()}


def _load_inline_loader(region: Region, contract: Contract, body: str) -> tuple[str, str]:
    """The import and the definitions of a load_inline extension with a framework-written host function."""
    cuda = _cuda_source(contract, body)
    key = hashlib.sha256(cuda.encode()).hexdigest()[:12]
    return (
        "from torch.utils.cpp_extension import load_inline",
        f'''
_KG_CUDA = r"""
{cuda}"""

_kg_ext = load_inline(
    name="kg_{region.id}_{key}",
    cpp_sources="{_declaration(contract)};",
    cuda_sources=_KG_CUDA,
    functions=["{contract.kernel_name}_launch"],
    extra_cuda_cflags=["-O3"],
)
''',
    )


def _nvrtc_loader(region: Region, contract: Contract, body: str) -> tuple[str, str]:
    """The import and the definitions of the kernel alone, compiled by NVRTC when the program loads."""
    cuda = contract.assemble(body)
    key = hashlib.sha256(cuda.encode()).hexdigest()[:12]
    info = contract.launch
    return (
        "from evaluator.regions.launch import load_region_kernel",
        f'''
_KG_CUDA = r"""
{cuda}"""

_kg_ext = load_region_kernel(
    name="kg_{region.id}_{key}",
    source=_KG_CUDA,
    kernel="{contract.kernel_name}",
    launch="{contract.kernel_name}_launch",
    n_inputs={len(info["inputs"])},
    n_scalars={len(info["scalars"])},
    output_shape={tuple(int(d) for d in info["output_shape"])!r},
    count={int(info["count"])},
)
''',
    )


def _spliced_forward(traced: Traced, region: Region) -> str:
    """fx's code for forward with the region's nodes replaced by `self.kg_region(inputs..., scalars...)`."""
    gm = traced.gm
    nodes = {n.name: n for n in gm.graph.nodes}
    missing = [name for name in [*region.nodes, *(t.name for t in region.inputs)] if name not in nodes]
    if missing:
        raise RegionError(f"{region.id}: nodes {missing} are not in the traced graph")
    members = [nodes[name] for name in region.nodes]
    last = max(members, key=lambda n: list(gm.graph.nodes).index(n))
    args = tuple(nodes[t.name] for t in region.inputs) + tuple(nodes[s] for s, _ in region.scalars)
    gm.add_submodule(REGION_MODULE, torch.nn.Module())
    with gm.graph.inserting_after(last):
        call = gm.graph.call_module(REGION_MODULE, args)
    last.replace_all_uses_with(call)
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
    return gm.code


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
    pointers = [f"{_arg(n)}_c.data_ptr<float>()" for n in inputs] + ["out.data_ptr<float>()"]
    pointers += [f"(float){_arg(n)}" for n in scalars] + ["n"]
    host = "\n".join(
        [
            f"{_declaration(contract)} {{",
            *lines,
            f"    auto out = torch::empty({{{shape}}}, {first});",
            f"    const int64_t n = {contract.launch['count']};",
            f"    const int64_t blocks = std::min<int64_t>((n + {THREADS - 1}) / {THREADS}, 1 << 20);",
            f"    {contract.kernel_name}<<<(unsigned)blocks, {THREADS}, 0,",
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


def _arg(name: str) -> str:
    """A C++ parameter name for a tensor or scalar (the kernel's own names are the contract's)."""
    return "a_" + re.sub(r"\W", "_", name)
