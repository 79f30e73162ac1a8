"""How a traced node reads as a step of functional PyTorch: its one canonical name (aliases, methods and
in-place forms folded) for glossary look-ups, and the line the model reads (`t3 = x + bias`,
`t4 = torch.nn.functional.gelu(t3, approximate='none')`), literal arguments named by the op's signature.
"""

from __future__ import annotations

import inspect
import operator
from collections.abc import Callable
from typing import Any

import torch
from torch.fx.node import _get_qualified_name
from torch.fx.operator_schemas import normalize_function
from torch.fx.passes.shape_prop import TensorMetadata

from regions.model import Step, TensorInfo

CALLS = ("call_function", "call_method", "call_module")
# The pointwise ops by canonical name: a map region's steps (regions.partition)
MAP = frozenset(
    "torch." + op
    for op in (
        "add sub mul div neg pow abs exp exp2 expm1 log log2 log10 log1p sqrt rsqrt reciprocal "
        "square sin cos tan asin acos atan sinh cosh tanh asinh acosh atanh erf erfc sigmoid relu "
        "selu clamp clamp_min clamp_max minimum maximum floor ceil round trunc sign positive"
    ).split()
) | frozenset(
    "torch.nn.functional." + op
    for op in (
        "gelu leaky_relu hardtanh relu6 elu selu celu silu mish softplus softsign hardsigmoid hardswish "
        "logsigmoid tanhshrink threshold"
    ).split()
)

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


def is_inplace(node: torch.fx.Node) -> bool:
    """An in-place call: `relu_`, `x.add_(...)`, `inplace=True` (a module call never counts)."""
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
    if is_inplace(node) and not node.kwargs.get("inplace"):
        name = name[:-1]
    name = _ALIASES.get(name, name)
    if name.startswith("Tensor.") and hasattr(torch, name[7:]):
        name = "torch." + name[7:]
    if name in ("torch.max", "torch.min") and len(node.args) > 1 and isinstance(node.args[1], torch.fx.Node):
        name = {"torch.max": "torch.maximum", "torch.min": "torch.minimum"}[name]
    return name


def mutates_shared(node: torch.fx.Node) -> bool:
    """An in-place op on a graph input, parameter or a tensor read again later: its effect matters."""
    if not is_inplace(node) or not node.args or not isinstance(node.args[0], torch.fx.Node):
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
        if is_inplace(node) and not impure:
            method = method.removesuffix("_")
        return Step(out, name, rendered, kw, f"{node.name} = {rendered[0]}.{method}({text})")
    # An in-place op whose effect matters is shown as written; the others read as their functional form.
    return Step(out, name, rendered, kw, f"{node.name} = {_raw_name(node) if impure else name}({text})")
