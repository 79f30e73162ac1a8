"""Trace a KernelBench problem with torch.fx on meta tensors; each op reads as functional PyTorch (steps).

Meta tensors make a 16 GB problem cost nothing; every shape comes from ShapeProp. torch.nn modules are
traced through, so their parameters become `get_attr` nodes and their ops functional calls the model can
read (`torch.nn.functional.leaky_relu(t1, negative_slope=0.1)`, never `LeakyReLU(0.1)(t1)`); a torch.nn
module whose forward cannot be traced (BatchNorm checks its input's rank) stays a leaf, and BatchNorm is
rewritten as `torch.nn.functional.batch_norm`.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import math
import threading
import types
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch
from torch.fx.passes.shape_prop import ShapeProp
from torch.utils._pytree import tree_leaves

from evaluator.problem import Problem, problem_from_dict
from regions.branches import Path, feasible, if_converted, trace_paths
from regions.decompose import ORIGIN, decompose
from regions.model import RegionError, Step, TensorInfo
from regions.moves import NAME
from regions.steps import CALLS, is_tensor, mutates_shared, render, tensor_info

# (best-of-n samples fan out in a thread pool) break each other ("CURRENT_PATCHER is None", "module is
# not installed as a submodule"), and the sample falls back to a whole program. One trace at a time.
_TRACING = threading.RLock()


@dataclass
class Traced:
    """A problem's reference as an fx graph with shapes, and each op rendered for the model.

    `inputs` are forward's tensor inputs; `scalar_inputs` its Python numbers (name, value), which regions
    take as float32 scalar arguments; `params` the parameters and buffers the graph reads (get_attr);
    `steps` every call node by name; `impure` the nodes that mutate a tensor something else still reads,
    which no region may absorb; `origins` the op each decomposed node came from (regions.shares).
    """

    name: str
    gm: torch.fx.GraphModule
    inputs: list[TensorInfo]
    scalar_inputs: list[tuple[str, float]]
    params: list[TensorInfo]
    output: TensorInfo
    steps: dict[str, Step]
    impure: frozenset[str]
    origins: dict[str, str]


def trace_problem(problem: Problem) -> Traced:
    """Trace `problem` on meta tensors; RegionError says why it cannot be (the caller then falls back)."""
    module = load_module(problem)
    with _TRACING:
        try:
            torch.manual_seed(42)
            with torch.device("meta"):
                model = module.Model(*module.get_init_inputs())
                inputs = list(module.get_inputs())
        except Exception as exc:
            raise RegionError(f"building Model or its inputs on meta tensors failed: {_why(exc)}") from exc
        return _describe(problem.name, graph_module(model, inputs), inputs)


def trace_source(source: str) -> Traced:
    """A problem's trace by its source, made once per process: the offering cuts it and export splices a
    copy of it, so a candidate's problem is traced once, however many samples ask for it at the same time.
    Read only: whoever changes its graph copies it."""
    with _TRACES:
        return _traced(source)


_TRACES = threading.Lock()


@functools.lru_cache(maxsize=16)
def _traced(source: str) -> Traced:
    return trace_problem(problem_from_dict({"name": "task", "level": 0, "problem_id": 0, "source": source}))


def graph_module(model: torch.nn.Module, inputs: list[Any]) -> torch.fx.GraphModule:
    """The graph regions are cut from, shapes propagated; the same node names for a real model on a GPU host
    as for its meta twin, so a region's nodes can be found there."""
    with _TRACING:
        paths = trace_paths(functools.partial(_trace_path, model))
    if len(paths) > 1:
        paths = feasible(paths, model, inputs)
    gm = torch.fx.GraphModule(model, if_converted(paths))
    _functional_batch_norm(gm)
    _propagate(gm, inputs)
    while decompose(gm):
        _propagate(gm, inputs)
    _rename(gm)
    return gm


def _trace_path(model: torch.nn.Module, decisions: list[bool]) -> Path:
    tracer = _Tracer(decisions=decisions)
    try:
        graph = tracer.trace(model)
    except Exception as exc:
        raise RegionError(f"torch.fx cannot trace forward: {_why(exc)}") from exc
    return Path(graph, tracer.conditions)


def _propagate(gm: torch.fx.GraphModule, inputs: list[Any]) -> None:
    try:
        ShapeProp(gm).propagate(*inputs)
    except Exception as exc:
        raise RegionError(f"shape propagation failed: {_why(exc)}") from exc


def load_module(problem: Problem) -> types.ModuleType:
    """Run the problem's text in a fresh module: problem files are trusted data, unlike generated code."""
    module = types.ModuleType(f"kernelgraph_problem_{problem.name}")
    module.__file__ = problem.path or f"<{problem.name}>"
    try:
        exec(compile(problem.source, module.__file__, "exec"), module.__dict__)
    except Exception as exc:
        raise RegionError(f"the problem source does not run: {_why(exc)}") from exc
    return module


def _why(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"


def _autowrap() -> tuple[types.ModuleType, ...]:
    """Modules whose functions become graph calls instead of being traced into: math (fx's default), and
    einops, which cannot read a proxy (its calls stay kept ops that PyTorch evaluates)."""
    try:
        import einops
    except ImportError:
        return (math,)
    return (math, einops)


_AUTOWRAP = _autowrap()


# Tensor factories whose sizes a forward often takes from its input (`torch.ones(t, t, device=x.device)` for a
# causal mask, t from x.shape): fx hands them proxies they cannot read, so while tracing each becomes a graph
# call when an argument is traced, and the shapes pass read the sizes back.
_FACTORIES = ("ones", "zeros", "full", "empty", "arange", "eye", "linspace")


def _factory_call(original: Any) -> Any:
    @functools.wraps(original)
    def factory(*args: Any, **kwargs: Any) -> Any:
        traced = [a for a in tree_leaves((args, kwargs)) if isinstance(a, torch.fx.Proxy)]
        if traced:
            return traced[0].tracer.create_proxy("call_function", original, args, kwargs)
        return original(*args, **kwargs)

    factory.kg_original = original  # type: ignore[attr-defined]
    return factory


@contextlib.contextmanager
def _traced_factories() -> Iterator[None]:
    """torch's factories as _factory_call while a trace runs (a nested trace finds them wrapped already)."""
    originals = {n: getattr(torch, n) for n in _FACTORIES if not hasattr(getattr(torch, n), "kg_original")}
    try:
        for name, original in originals.items():
            setattr(torch, name, _factory_call(original))
        yield
    finally:
        for name, original in originals.items():
            setattr(torch, name, original)


class _Tracer(torch.fx.Tracer):
    """Traces through every module except torch.nn ones whose own forward fx cannot trace."""

    def __init__(self, verdicts: dict[int, bool] | None = None, decisions: list[bool] | None = None) -> None:
        super().__init__(autowrap_modules=_AUTOWRAP)
        self.verdicts = {} if verdicts is None else verdicts
        # How to answer forward's conditions in turn (regions.branches); None: a condition is an error.
        self.decisions = decisions
        self.conditions: list[tuple[torch.fx.Node, bool]] = []
        # Buffers as graph values too: `self.mask[:t, :t]` with t a traced size slices a proxy, not a tensor.
        self.proxy_buffer_attributes = True

    def trace(self, root: Any, concrete_args: dict[str, Any] | None = None) -> torch.fx.Graph:
        with _traced_factories():
            return super().trace(root, concrete_args)

    def to_bool(self, obj: torch.fx.Proxy) -> bool:
        if self.decisions is None:
            return super().to_bool(obj)
        n = len(self.conditions)
        decided = self.decisions[n] if n < len(self.decisions) else True
        self.conditions.append((obj.node, decided))
        return decided

    def is_leaf_module(self, m: torch.nn.Module, module_qualified_name: str) -> bool:
        if not type(m).__module__.startswith("torch.") or isinstance(
            m, torch.nn.Sequential | torch.nn.ModuleList | torch.nn.ModuleDict
        ):
            return False
        if id(m) not in self.verdicts:
            # Optional arguments keep their defaults, as in the usual call `self.conv_transpose(x)`.
            params = inspect.signature(m.forward).parameters.values()
            defaults = {p.name: p.default for p in params if p.default is not p.empty}
            try:
                _Tracer(self.verdicts).trace(m, concrete_args=defaults)
                self.verdicts[id(m)] = False
            except Exception:
                self.verdicts[id(m)] = True
        return self.verdicts[id(m)]


def _functional_batch_norm(gm: torch.fx.GraphModule) -> None:
    """Leaf BatchNorm modules -> F.batch_norm on get_attr nodes, exactly as the module computes it."""
    for node in list(gm.graph.nodes):
        if node.op != "call_module":
            continue
        bn = gm.get_submodule(node.target)
        if not isinstance(bn, torch.nn.modules.batchnorm._BatchNorm) or bn.momentum is None:
            continue
        with gm.graph.inserting_before(node):
            attrs = []
            for attr in ("running_mean", "running_var", "weight", "bias"):
                has = getattr(bn, attr, None) is not None
                attrs.append(gm.graph.get_attr(f"{node.target}.{attr}") if has else None)
            training = bn.training or bn.running_mean is None
            new = gm.graph.call_function(
                torch.nn.functional.batch_norm,
                (node.args[0], *attrs),
                {"training": training, "momentum": bn.momentum, "eps": bn.eps},
            )
        node.replace_all_uses_with(new)
        gm.graph.erase_node(node)
    gm.recompile()


def _rename(gm: torch.fx.GraphModule) -> None:
    """Ops become t0, t1, ... and inputs keep forward's own names, so steps read like the source; a node a
    rewrite named keeps its name (a convolution's bias viewed by channel: `conv_bias_view`)."""
    count = 0
    for node in gm.graph.nodes:
        if node.op == "placeholder" and node.name != node.target and str(node.target).isidentifier():
            node._rename(str(node.target))
        elif node.op in CALLS and NAME in node.meta:
            node._rename(node.meta[NAME])
        elif node.op in CALLS:
            node._rename(f"t{count}")
            count += 1
    gm.recompile()


def _describe(name: str, gm: torch.fx.GraphModule, inputs: list[Any]) -> Traced:
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    tensors, scalars = [], []
    for node, value in zip(placeholders, inputs, strict=False):
        if isinstance(value, bool) or not isinstance(value, torch.Tensor | int | float):
            raise RegionError(f"input {node.name} is a {type(value).__name__}, neither a tensor nor a number")
        if isinstance(value, torch.Tensor):
            tensors.append(tensor_info(node))
        else:
            scalars.append((node.name, float(value)))
    params = [tensor_info(n) for n in gm.graph.nodes if n.op == "get_attr" and is_tensor(n)]
    out_node = next(n for n in gm.graph.nodes if n.op == "output").args[0]
    if not isinstance(out_node, torch.fx.Node) or not is_tensor(out_node):
        raise RegionError("forward does not return a single tensor")
    impure = frozenset(n.name for n in gm.graph.nodes if n.op in CALLS and mutates_shared(n))
    steps = {n.name: render(n, n.name in impure) for n in gm.graph.nodes if n.op in CALLS}
    origins = {n.name: n.meta[ORIGIN] for n in gm.graph.nodes if ORIGIN in n.meta}
    return Traced(name, gm, tensors, scalars, params, tensor_info(out_node), steps, impure, origins)
