"""Trace a KernelBench problem with torch.fx on meta tensors and render each op as functional PyTorch.

Meta tensors make a 16 GB problem cost nothing; every shape comes from ShapeProp. torch.nn modules are
traced through, so their parameters become `get_attr` nodes and their ops functional calls the model can
read (`torch.nn.functional.leaky_relu(t1, negative_slope=0.1)`, never `LeakyReLU(0.1)(t1)`); a torch.nn
module whose forward cannot be traced (BatchNorm checks its input's rank) stays a leaf, and BatchNorm is
rewritten as `torch.nn.functional.batch_norm`.
"""

from __future__ import annotations

import functools
import inspect
import math
import operator
import threading
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch.fx.node import _get_qualified_name
from torch.fx.operator_schemas import normalize_function
from torch.fx.passes.shape_prop import ShapeProp, TensorMetadata

from evaluator.problem import Problem, problem_from_dict
from regions.decompose import decompose
from regions.model import RegionError, Step, TensorInfo

CALLS = ("call_function", "call_method", "call_module")

# Python operators as the infix text they trace from and the torch function they mean.
_INFIX = {
    operator.add: ("+", "torch.add"),
    operator.sub: ("-", "torch.sub"),
    operator.mul: ("*", "torch.mul"),
    operator.truediv: ("/", "torch.div"),
    operator.floordiv: ("//", "torch.floor_divide"),
    operator.mod: ("%", "torch.remainder"),
    operator.pow: ("**", "torch.pow"),
    operator.matmul: ("@", "torch.matmul"),
    operator.gt: (">", "torch.gt"),
    operator.lt: ("<", "torch.lt"),
    operator.ge: (">=", "torch.ge"),
    operator.le: ("<=", "torch.le"),
    operator.eq: ("==", "torch.eq"),
    operator.ne: ("!=", "torch.ne"),
}
_UNARY = {operator.neg: ("-", "torch.neg"), operator.pos: ("+", "torch.positive")}

# Spellings of one op that a glossary should see as one name.
_ALIASES = {
    "torch.conv1d": "torch.nn.functional.conv1d",
    "torch.conv2d": "torch.nn.functional.conv2d",
    "torch.conv3d": "torch.nn.functional.conv3d",
    "torch.conv_transpose1d": "torch.nn.functional.conv_transpose1d",
    "torch.conv_transpose2d": "torch.nn.functional.conv_transpose2d",
    "torch.conv_transpose3d": "torch.nn.functional.conv_transpose3d",
    "torch.nn.functional.relu": "torch.relu",
    "torch.nn.functional.sigmoid": "torch.sigmoid",
    "torch.special.expit": "torch.sigmoid",
    "torch.nn.functional.tanh": "torch.tanh",
    "torch.nn.functional.softmax": "torch.softmax",
    "torch.nn.functional.log_softmax": "torch.log_softmax",
    "torch.special.softmax": "torch.softmax",
    "torch.special.log_softmax": "torch.log_softmax",
    "torch.special.logsumexp": "torch.logsumexp",
    "torch.clip": "torch.clamp",
    "torch.divide": "torch.div",
    "torch.true_divide": "torch.div",
    "torch.multiply": "torch.mul",
    "torch.subtract": "torch.sub",
    "torch.absolute": "torch.abs",
    "torch.negative": "torch.neg",
    "torch.special.erf": "torch.erf",
    "torch.nn.functional.hardtanh_": "torch.nn.functional.hardtanh",
}

# Parameter names of builtins whose overloads defeat torch.fx's normaliser.
_CONV = ("input", "weight", "bias", "stride", "padding", "dilation", "groups")
_CONV_T = ("input", "weight", "bias", "stride", "padding", "output_padding", "groups", "dilation")
_PARAMS: dict[str, tuple[str, ...]] = {
    **{f"torch.nn.functional.conv{d}d": _CONV for d in (1, 2, 3)},
    **{f"torch.nn.functional.conv_transpose{d}d": _CONV_T for d in (1, 2, 3)},
    "torch.clamp": ("input", "min", "max"),
    "torch.max": ("input", "dim", "keepdim"),
    "torch.min": ("input", "dim", "keepdim"),
    "torch.sum": ("input", "dim", "keepdim"),
    "torch.mean": ("input", "dim", "keepdim"),
}

# Keyword arguments that only steer PyTorch itself.
_NOISE = {"_stacklevel"}
# torch.fx patches module calls through process-wide state while it traces: two threads tracing at once
# (best-of-n samples fan out in a thread pool) break each other ("CURRENT_PATCHER is None", "module is
# not installed as a submodule"), and the sample falls back to a whole program. One trace at a time.
_TRACING = threading.RLock()


@dataclass
class Traced:
    """A problem's reference as an fx graph with shapes, and each op rendered for the model.

    `inputs` are forward's tensor inputs; `scalar_inputs` its Python numbers (name, value), which regions
    take as float32 scalar arguments; `params` the parameters and buffers the graph reads (get_attr);
    `steps` every call node by name; `impure` the nodes that mutate a tensor something else still reads,
    which no region may absorb.
    """

    name: str
    gm: torch.fx.GraphModule
    inputs: list[TensorInfo]
    scalar_inputs: list[tuple[str, float]]
    params: list[TensorInfo]
    output: TensorInfo
    steps: dict[str, Step]
    impure: frozenset[str]


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
    try:
        with _TRACING:
            graph = _Tracer().trace(model)
    except torch.fx.proxy.TraceError as exc:
        raise RegionError(f"forward has data-dependent control flow, fx cannot trace it: {exc}") from exc
    except Exception as exc:
        raise RegionError(f"torch.fx cannot trace forward: {_why(exc)}") from exc
    gm = torch.fx.GraphModule(model, graph)
    _functional_batch_norm(gm)
    _propagate(gm, inputs)
    while decompose(gm):
        _propagate(gm, inputs)
    _rename(gm)
    return gm


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


class _Tracer(torch.fx.Tracer):
    """Traces through every module except torch.nn ones whose own forward fx cannot trace."""

    def __init__(self, verdicts: dict[int, bool] | None = None) -> None:
        super().__init__(autowrap_modules=_AUTOWRAP)
        self.verdicts = {} if verdicts is None else verdicts
        # Buffers as graph values too: `self.mask[:t, :t]` with t a traced size slices a proxy, not a tensor.
        self.proxy_buffer_attributes = True

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
    """Ops become t0, t1, ... and inputs keep forward's own names, so steps read like the source."""
    count = 0
    for node in gm.graph.nodes:
        if node.op == "placeholder" and node.name != node.target and str(node.target).isidentifier():
            node._rename(str(node.target))
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
    impure = frozenset(n.name for n in gm.graph.nodes if n.op in CALLS and _mutates_shared(n))
    steps = {n.name: render(n, n.name in impure) for n in gm.graph.nodes if n.op in CALLS}
    return Traced(name, gm, tensors, scalars, params, tensor_info(out_node), steps, impure)


def is_tensor(node: Any) -> bool:
    """A node whose value is one tensor (not a tuple, size or Python number)."""
    return isinstance(node, torch.fx.Node) and isinstance(node.meta.get("tensor_meta"), TensorMetadata)


def tensor_info(node: torch.fx.Node) -> TensorInfo:
    meta = node.meta["tensor_meta"]
    return TensorInfo(node.name, tuple(int(d) for d in meta.shape), str(meta.dtype).removeprefix("torch."))


# ---- what an op is called ---------------------------------------------------------------------------------


def _raw_name(node: torch.fx.Node) -> str:
    if node.op == "call_method":
        name = str(node.target)
        return f"torch.{name}" if hasattr(torch, name.rstrip("_")) else f"Tensor.{name}"
    if node.op == "call_module":
        return f"module.{type(node.graph.owning_module.get_submodule(node.target)).__name__}"
    try:
        name = _get_qualified_name(node.target)
    except Exception:
        name = getattr(node.target, "__name__", str(node.target))
    return name.replace("torch._C._nn.", "torch.nn.functional.").replace(
        "torch._C._special.special_", "torch."
    )


def _is_inplace(node: torch.fx.Node) -> bool:
    if node.kwargs.get("inplace") is True:
        return True
    leaf = _raw_name(node).rsplit(".", 1)[-1]
    return leaf.endswith("_") and not leaf.startswith("_") and node.op != "call_module"


def canonical(node: torch.fx.Node) -> str:
    """The op's one functional name for glossary look-ups: aliases, methods and in-place forms folded."""
    if node.op == "call_function" and node.target in _INFIX:
        return _INFIX[node.target][1]
    if node.op == "call_function" and node.target in _UNARY:
        return _UNARY[node.target][1]
    if node.op == "call_function" and node.target is operator.getitem:
        return "operator.getitem"
    name = _raw_name(node)
    if node.op == "call_module":
        return name
    if _is_inplace(node) and not node.kwargs.get("inplace"):
        name = name[:-1]
    name = _ALIASES.get(name, name)
    if name.startswith("Tensor.") and hasattr(torch, name[7:]):
        name = "torch." + name[7:]
    if name in ("torch.max", "torch.min") and len(node.args) > 1 and isinstance(node.args[1], torch.fx.Node):
        name = {"torch.max": "torch.maximum", "torch.min": "torch.minimum"}[name]
    return name


def _mutates_shared(node: torch.fx.Node) -> bool:
    """An in-place op on a graph input, parameter or a tensor read again later: its effect matters."""
    if not _is_inplace(node) or not node.args or not isinstance(node.args[0], torch.fx.Node):
        return False
    target = node.args[0]
    return target.op not in CALLS or len(target.users) > 1


# ---- how an op reads ---------------------------------------------------------------------------------------


def literal(value: Any) -> str:
    """Python source for an fx argument: node names, numbers, tuples, slices, dtypes."""
    if isinstance(value, torch.fx.Node):
        return value.name
    if isinstance(value, tuple):
        inner = ", ".join(literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return f"float('{value}')"
    if isinstance(value, slice):
        return f"slice({literal(value.start)}, {literal(value.stop)}, {literal(value.step)})"
    if value is Ellipsis:
        return "..."
    if isinstance(value, torch.dtype | torch.memory_format | torch.layout):
        return str(value)
    return repr(value)


def _index(value: Any) -> str:
    """Subscript text: x[:, 0], x[..., 1:3]."""
    if isinstance(value, tuple):
        return ", ".join(_index(v) for v in value) or "()"
    if isinstance(value, slice):
        parts = ["" if p is None else literal(p) for p in (value.start, value.stop, value.step)]
        return ":".join(parts[:2]) + (f":{parts[2]}" if parts[2] else "")
    return literal(value)


def _param_names(node: torch.fx.Node, name: str) -> tuple[tuple[str, ...], dict[str, Any]]:
    """Positional parameter names of the op, and the float-typed ones' annotations, where knowable."""
    if name in _PARAMS:
        return _PARAMS[name], {}
    fn: Callable[..., Any] | None = (
        node.target if node.op == "call_function" else getattr(torch, name[6:], None)
    )
    if fn is None or not callable(fn):
        return (), {}
    try:
        params = inspect.signature(fn).parameters
        if not any(p.kind == p.VAR_POSITIONAL for p in params.values()):
            annotations = {k: p.annotation for k, p in params.items()}
            return tuple(params), annotations
    except (TypeError, ValueError):
        pass
    try:
        pair = normalize_function(fn, tuple(node.args), dict(node.kwargs), normalize_to_only_use_kwargs=True)
    except Exception:
        pair = None
    return (tuple(pair.kwargs), {}) if pair is not None else ((), {})


def _call_args(node: torch.fx.Node, name: str, keep_inplace: bool) -> tuple[list[Any], dict[str, Any]]:
    """Tensor arguments stay positional; literal ones become keywords named by the op's signature."""
    names, annotations = _param_names(node, name)
    args = list(node.args)
    lead = 0
    while lead < len(args) and _holds_node(args[lead]):
        lead += 1
    if len(names) >= len(args):
        kwargs = dict(zip(names[lead:], args[lead:], strict=False))
        args = args[:lead]
    else:
        kwargs = {}
    kwargs.update(node.kwargs)
    kept = {}
    for key, value in kwargs.items():
        if key in _NOISE or value is None or (key == "inplace" and not (keep_inplace and value)):
            continue
        if (
            annotations.get(key) in (float, "float")
            and isinstance(value, int)
            and not isinstance(value, bool)
        ):
            value = float(value)
        kept[key] = value
    return args, kept


def _holds_node(value: Any) -> bool:
    if isinstance(value, list | tuple):
        return any(_holds_node(v) for v in value)
    return isinstance(value, torch.fx.Node)


def render(node: torch.fx.Node, impure: bool = False) -> Step:
    """`t3 = x + bias`, `t4 = torch.nn.functional.gelu(t3, approximate='none')`, `t5 = t4.sum(dim=1)`."""
    name = canonical(node)
    out = tensor_info(node) if is_tensor(node) else TensorInfo(node.name, (), "")
    if node.op == "call_function" and node.target in _INFIX:
        a, b = (literal(v) for v in node.args)
        return Step(out, name, (a, b), (), f"{node.name} = {a} {_INFIX[node.target][0]} {b}")
    if node.op == "call_function" and node.target in _UNARY:
        a = literal(node.args[0])
        return Step(out, name, (a,), (), f"{node.name} = {_UNARY[node.target][0]}{a}")
    if node.op == "call_function" and node.target is operator.getitem:
        a = literal(node.args[0])
        return Step(out, name, (a, literal(node.args[1])), (), f"{node.name} = {a}[{_index(node.args[1])}]")
    if node.op == "call_module":
        args = tuple(literal(a) for a in node.args)
        text = ", ".join(args + tuple(f"{k}={literal(v)}" for k, v in node.kwargs.items()))
        return Step(out, name, args, tuple(node.kwargs.items()), f"{node.name} = self.{node.target}({text})")
    args, kwargs = _call_args(node, name if node.op == "call_function" else f"torch.{node.target}", impure)
    rendered = tuple(literal(a) for a in args)
    kw = tuple((k, v.name if isinstance(v, torch.fx.Node) else v) for k, v in kwargs.items())
    text = ", ".join(
        rendered[node.op == "call_method" :] + tuple(f"{k}={literal(v)}" for k, v in kwargs.items())
    )
    if node.op == "call_method":
        method = str(node.target)
        if _is_inplace(node) and not impure:
            method = method.removesuffix("_")
        return Step(out, name, rendered, kw, f"{node.name} = {rendered[0]}.{method}({text})")
    # An in-place op whose effect matters is shown as written; the others read as their functional form.
    return Step(out, name, rendered, kw, f"{node.name} = {_raw_name(node) if impure else name}({text})")
