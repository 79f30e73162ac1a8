"""Composite ops rewritten as the ops the loop kinds cover, as TorchInductor's decompositions do.

A batch norm in training mode is a mean and a variance over (N, H, W) and a pointwise step; a group norm
the same over each group's view; a loss a pointwise step and a mean; attention two products around a
softmax; an einsum of two operands a permuted, reshaped product (those three in regions.composites);
`torch.max(x, dim)[0]` is `amax`; a convolution's bias is an add after it where a pointwise op
reads it (`bias_apart`); a max pool, or a max or min over dims, takes the place of the non-decreasing
pointwise steps before it, which then follow it (`pool_first`). Each
rewrite is a small PyTorch function traced by fx and spliced in place of the composite node, so the steps
still read as functional PyTorch, and every region the rewrite yields gets a contract of its kind. Shapes
are those of the traced inputs (KernelBench shapes are fixed), so the caller propagates shapes before and
after. A node whose arguments fall outside what a rewrite reproduces exactly (dropout, an attention mask,
class weights, label smoothing) stays as it is, kept for PyTorch.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch.fx.operator_schemas import normalize_function

from regions.composites import (
    Rewrite,
    attention,
    cross_entropy,
    einsum,
    pairwise,
    traced_shape,
    triplet_margin,
)
from regions.steps import MAP, canonical, mutates_shared
from regions.window import MAX_POOL

# node.meta key: `op:instance` of the op a rewritten node came from, so a profile's call of it finds its steps
ORIGIN = "kg_origin"
# node.meta key: the name a rewrite gives a node it makes, instead of t<n> (a parameter's view reads as one)
NAME = "kg_name"


def decompose(gm: torch.fx.GraphModule) -> bool:
    """Rewrite every composite node of `gm` that has a decomposition and whose inputs have shapes; True
    when the graph changed: the caller propagates shapes and calls again (a rewrite that reads another's
    output waits for the next call)."""
    changed = False
    for node in list(gm.graph.nodes):
        if not all("type" in n.meta for n in node.all_input_nodes):  # made by a rewrite this pass
            continue
        if bias_apart(gm, node) or pool_first(node):
            changed = True
            continue
        plan = _plan(gm, node)
        if plan is None:
            continue
        fn, tensors = plan
        _splice(gm, node, fn, tensors)
        changed = True
    for node in list(gm.graph.nodes):  # a (values, indices) pair whose picks were all rewritten
        if not node.users and _is_max_with_dim(node):
            gm.graph.erase_node(node)
    if changed:
        gm.recompile()
    return changed


def bias_apart(gm: torch.fx.GraphModule, node: torch.fx.Node) -> bool:
    """Take a convolution's bias out of it and add it after, where the convolution's one user is a
    pointwise op: the add joins the map region that follows, so the bias costs no pass of its own.
    PyTorch's cuDNN convolutions add it in one ("cuDNN convolutions does not handle bias. Bias is handled
    outside": aten/src/ATen/native/cudnn/ConvShared.cpp), as TorchInductor's lowering does too. The add
    keeps no origin of the convolution's, so a profile's convolution time stays with the convolution."""
    if node.op != "call_function" or node.target not in _CONVS or len(node.users) != 1:
        return False
    (user,) = node.users
    if user.op not in ("call_function", "call_method") or canonical(user) not in MAP:
        return False
    bias = node.args[2] if len(node.args) > 2 else node.kwargs.get("bias")  # (input, weight, bias, ...)
    if not isinstance(bias, torch.fx.Node):
        return False
    node.args = tuple(None if a is bias else a for a in node.args)
    node.kwargs = {k: None if v is bias else v for k, v in node.kwargs.items()}
    with gm.graph.inserting_after(node):
        view = gm.graph.call_method("view", (bias, _channel_view(len(traced_shape(node)))))
    view.meta[NAME] = f"{bias.name}_view"
    with gm.graph.inserting_after(view):
        added = gm.graph.call_function(operator.add, (node, view))
    user.replace_input_with(node, added)
    return True


_CONVS = {F.conv1d, F.conv2d, F.conv3d, F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d}


def pool_first(node: torch.fx.Node) -> bool:
    """Move a max pool, or a max or min over dims, before the pointwise steps that feed it where they
    commute: each step is non-decreasing in its one varying operand and its other operands are the same
    across every window or reduced row (a scalar, a channel's bias), so max(f(x)) = f(max(x)) (and so for
    min), exactly in float too (IEEE rounding is monotone; f applies to the same element). The steps then
    run on the pooled or reduced tensor, a fraction of the size, as the pool's or reduction's epilogue
    (moderate fuses it into that kernel), and the full-size tensor makes no round trip through memory. A
    convolution, bias and ReLU before a max pool (LeNet, AlexNet, VGG) or a division before one (level 2's
    p8) become the convolution, then one kernel."""
    found = _folded(node)
    if found is None:
        return False
    folded, kept = found
    source, chain = node.args[0], []
    while isinstance(source, torch.fx.Node) and len(source.users) == 1 and _shaped(source):
        varying = _non_decreasing(source, folded, kept)
        if varying is None:
            break
        chain.insert(0, source)
        source = varying
    if not chain:
        return False
    users = list(node.users)
    node.replace_input_with(chain[-1], source)
    after = node
    for step in chain:
        after.append(step)
        after = step
    chain[0].replace_input_with(source, node)
    for user in users:
        user.replace_input_with(node, chain[-1])
    return True


_EXTREMA = {"torch.amax", "torch.amin", "torch.max", "torch.min"}


def _shaped(node: torch.fx.Node) -> bool:
    """A graph value with a traced tensor shape (a (values, indices) pair has a pair of them)."""
    return hasattr(node.meta.get("tensor_meta"), "shape")


def _folded(node: torch.fx.Node) -> tuple[frozenset[int], bool] | None:
    """The dims a max pool (values alone) or a max or min over dims folds, counted from the input's last
    (-1, -2, ...), and whether its output keeps them (size 1, or pooled); None where it is neither or its
    input has no traced shape."""
    if node.op not in ("call_function", "call_method") or not node.args:
        return None
    x, name = node.args[0], canonical(node)
    if name not in MAX_POOL and name not in _EXTREMA:
        return None
    if not isinstance(x, torch.fx.Node) or not _shaped(x):
        return None
    ndim = len(traced_shape(x))
    if name in MAX_POOL:
        kwargs = _named(node)
        if kwargs is None or kwargs.get("return_indices"):
            return None
        return frozenset(range(-MAX_POOL[name], 0)), True
    if len(node.args) > 3:
        return None
    if name in ("torch.max", "torch.min"):  # the whole tensor's (torch.max(x, dim) is rewritten as amax)
        return (frozenset(range(-ndim, 0)), False) if len(node.args) == 1 and not node.kwargs else None
    dim = node.kwargs.get("dim", node.args[1] if len(node.args) > 1 else ())
    kept = bool(node.kwargs.get("keepdim", node.args[2] if len(node.args) > 2 else False))
    dims = [dim] if isinstance(dim, int) else list(dim) if isinstance(dim, list | tuple) else None
    if dims is None or not all(isinstance(d, int) for d in dims):
        return None
    return frozenset((d % ndim) - ndim for d in dims) if dims else frozenset(range(-ndim, 0)), kept


# Pointwise ops non-decreasing in their first operand, whatever their scalar arguments
_RISING = {
    "torch.relu",
    "torch.clamp",
    "torch.clamp_min",
    "torch.clamp_max",
    "torch.nn.functional.relu6",
    "torch.nn.functional.hardtanh",
}


def _non_decreasing(step: torch.fx.Node, folded: frozenset[int], kept: bool) -> torch.fx.Node | None:
    """The operand of a pointwise step that it is non-decreasing in, where the step keeps that operand's
    shape and its other operands are scalars or tensors that hold one value along every `folded` dim
    (counted from the last) and broadcast against the folded output as they did before; else None."""
    if step.op not in ("call_function", "call_method") or mutates_shared(step):
        return None  # an in-place step on a value read again would change what that reader sees
    nodes = [a for a in (*step.args, *step.kwargs.values()) if isinstance(a, torch.fx.Node)]
    if not nodes or not all(_shaped(a) for a in nodes):
        return None
    shape = traced_shape(step)
    x = step.args[0] if step.args else None
    if not isinstance(x, torch.fx.Node) or traced_shape(x) != shape:
        x = step.args[1] if len(step.args) > 1 else None
    if not isinstance(x, torch.fx.Node) or traced_shape(x) != shape:
        return None
    if any(a is not x and not _constant_over(traced_shape(a), folded, kept) for a in nodes):
        return None
    name, first = canonical(step), step.args[0] is x
    others = [a for a in step.args if a is not x]
    if name in _RISING or (name == "torch.nn.functional.leaky_relu" and _slope(step) >= 0):
        return x if first else None
    if step.kwargs or len(others) != 1:  # an add's alpha could flip it
        return None
    other = others[0]
    positive = isinstance(other, int | float) and not isinstance(other, bool) and other > 0
    if name == "torch.add" or (name == "torch.sub" and first):
        return x
    if (name == "torch.mul" or (name == "torch.div" and first)) and positive:
        return x
    return None


def _constant_over(shape: tuple[int, ...], folded: frozenset[int], kept: bool) -> bool:
    """A tensor of `shape`, broadcast against the folded tensor, holds one value along every folded dim
    (counted from the last) and lines up with the output as it did with the input: where the output
    drops the folded dims, only a tensor that does not reach them (its dims all after the last one)."""
    if not kept:
        return all(-d > len(shape) for d in folded)
    return all(-d > len(shape) or shape[d] == 1 for d in folded)


def _slope(step: torch.fx.Node) -> float:
    """A leaky ReLU's negative slope (PyTorch's default 0.01); -1 where it is not a number."""
    value = step.args[1] if len(step.args) > 1 else step.kwargs.get("negative_slope", 0.01)
    return float(value) if isinstance(value, int | float) else -1.0


def _plan(gm: torch.fx.GraphModule, node: torch.fx.Node) -> tuple[Rewrite, list[torch.fx.Node]] | None:
    """The rewrite for `node` and the graph values it reads, or None to keep the node."""
    if node.op == "call_module":
        module = gm.get_submodule(str(node.target))
        if isinstance(module, torch.nn.modules.instancenorm._InstanceNorm) and not module.track_running_stats:
            return _module_instance_norm(module, node)
        return None
    if node.op == "call_function" and node.target is torch.einsum:
        return einsum(node)
    if node.op == "call_function" and node.target in _BY_FUNCTION:
        kwargs = _named(node)
        return None if kwargs is None else _BY_FUNCTION[node.target](kwargs)
    if node.op in ("call_function", "call_method") and _is_max_with_dim(node):
        return None  # its getitem users are rewritten instead
    if node.op == "call_function" and node.target in (operator.getitem, getattr):
        return _values_or_indices(node)
    return None


def _named(node: torch.fx.Node) -> dict[str, Any] | None:
    """The call's arguments by parameter name, defaults filled in; None where fx cannot match them."""
    pair = normalize_function(
        node.target, tuple(node.args), dict(node.kwargs), normalize_to_only_use_kwargs=True
    )
    if pair is None or any(pair.kwargs.get(k) is not None for k in _LEGACY):
        return None
    return dict(pair.kwargs)


_LEGACY = ("size_average", "reduce")  # losses' old reduction flags: left to PyTorch


def _splice(gm: torch.fx.GraphModule, node: torch.fx.Node, fn: Rewrite, tensors: list[Any]) -> None:
    """Record `fn` on proxies of `tensors` into a graph of its own and copy its nodes in place of `node`."""
    sub = torch.fx.Graph()
    tracer = torch.fx.proxy.GraphAppendingTracer(sub)
    holders = [sub.placeholder(f"v{k}") for k in range(len(tensors))]
    sub.output(fn([torch.fx.Proxy(h, tracer) for h in holders]).node)
    val_map: dict[torch.fx.Node, Any] = dict(zip(holders, tensors, strict=True))
    with gm.graph.inserting_before(node):
        value = gm.graph.graph_copy(sub, val_map)
    origin = node.meta.get(ORIGIN) or f"{_op_name(gm, node)}:{node.name}"
    for made in (val_map[n] for n in sub.nodes if n.op in ("call_function", "call_method")):
        made.meta.setdefault(ORIGIN, origin)
    node.replace_all_uses_with(value)
    gm.graph.erase_node(node)


def _op_name(gm: torch.fx.GraphModule, node: torch.fx.Node) -> str:
    """The rewritten op as a profile names it (aten::<name>): `batch_norm`, `instance_norm`, `max`, ..."""
    if node.op == "call_module":
        return "instance_norm"  # the one module rewritten (_module_instance_norm)
    if node.op == "call_function" and node.target in (operator.getitem, getattr):  # torch.max(x, dim)[k]
        node = node.args[0]
    return str(getattr(node.target, "__name__", node.target))


def _channel_view(ndim: int) -> list[int]:
    return [1, -1] + [1] * (ndim - 2)


def _normalize(x: Any, mean: Any, var: Any, weight: Any, bias: Any, eps: float, view: list[int]) -> Any:
    return _affine((x - mean) * torch.rsqrt(var + eps), weight, bias, view)


def _affine(y: Any, weight: Any, bias: Any, view: list[int]) -> Any:
    if weight is not None:
        y = y * weight.view(view)
    if bias is not None:
        y = y + bias.view(view)
    return y


def _present(values: dict[str, Any], keys: tuple[str, ...]) -> tuple[list[Any], list[bool]]:
    """The graph values among `keys` (None stays out) and which keys had one."""
    present = [values.get(k) is not None for k in keys]
    return [values[k] for k, has in zip(keys, present, strict=True) if has], present


def _filled(given: list[Any], present: list[bool]) -> list[Any]:
    it = iter(given)
    return [next(it) if has else None for has in present]


# ---- norms -------------------------------------------------------------------------------------------------


def _batch_norm(a: dict[str, Any]) -> tuple[Rewrite, list[Any]]:
    x = a["input"]
    ndim, eps = len(traced_shape(x)), float(a["eps"])
    batch_stats = bool(a["training"]) or a["running_mean"] is None
    view, dims = _channel_view(ndim), [0, *range(2, ndim)]
    keys = ("input", "running_mean", "running_var", "weight", "bias")
    given, present = _present(a, keys)

    def body(values: list[Any]) -> Any:
        x, mean, var, weight, bias = _filled(values, present)
        if batch_stats:
            mean = torch.mean(x, dim=dims, keepdim=True)
            var = torch.var(x, dim=dims, keepdim=True, unbiased=False)
        else:
            mean, var = mean.view(view), var.view(view)
        return _normalize(x, mean, var, weight, bias, eps, view)

    return body, given


def _instance_norm(a: dict[str, Any]) -> tuple[Rewrite, list[Any]] | None:
    if not a["use_input_stats"]:
        return None
    x = a["input"]
    ndim, eps = len(traced_shape(x)), float(a["eps"])
    given, present = _present(a, ("input", "weight", "bias"))
    dims = list(range(2, ndim))

    def body(values: list[Any]) -> Any:
        x, weight, bias = _filled(values, present)
        mean = torch.mean(x, dim=dims, keepdim=True)
        var = torch.var(x, dim=dims, keepdim=True, unbiased=False)
        return _normalize(x, mean, var, weight, bias, eps, _channel_view(ndim))

    return body, given


def _module_instance_norm(module: Any, node: torch.fx.Node) -> tuple[Rewrite, list[Any]] | None:
    """A leaf InstanceNorm module (its forward checks the input's rank, so fx keeps it whole)."""
    if len(node.args) != 1 or node.kwargs:
        return None
    graph = node.graph
    with graph.inserting_before(node):
        weight = graph.get_attr(f"{node.target}.weight") if module.weight is not None else None
        bias = graph.get_attr(f"{node.target}.bias") if module.bias is not None else None
    return _instance_norm(
        {"input": node.args[0], "weight": weight, "bias": bias, "use_input_stats": True, "eps": module.eps}
    )


def _group_norm(a: dict[str, Any]) -> tuple[Rewrite, list[Any]]:
    x = a["input"]
    shape, groups, eps = traced_shape(x), int(a["num_groups"]), float(a["eps"])
    given, present = _present(a, ("input", "weight", "bias"))

    def body(values: list[Any]) -> Any:
        x, weight, bias = _filled(values, present)
        grouped = x.reshape(shape[0], groups, -1)
        mean = torch.mean(grouped, dim=2, keepdim=True)
        var = torch.var(grouped, dim=2, keepdim=True, unbiased=False)
        y = ((grouped - mean) * torch.rsqrt(var + eps)).reshape(shape)
        return _affine(y, weight, bias, _channel_view(len(shape)))

    return body, given


# ---- (values, indices) reductions --------------------------------------------------------------------------


def _is_max_with_dim(node: torch.fx.Node) -> bool:
    """torch.max(x, dim) / x.max(dim=...) (and min): a (values, indices) pair, not one tensor."""
    if node.op == "call_method":
        name = node.target
    elif node.op == "call_function" and node.target in (torch.max, torch.min):
        name = node.target.__name__
    else:
        return False
    if name not in ("max", "min"):
        return False
    dim = node.kwargs.get("dim", node.args[1] if len(node.args) > 1 else None)
    return isinstance(dim, int)


def _values_or_indices(node: torch.fx.Node) -> tuple[Rewrite, list[Any]] | None:
    """`torch.max(x, dim)[0]` (or `.values`) -> torch.amax; `[1]` (or `.indices`) -> torch.argmax."""
    pair, which = node.args[0], node.args[1]
    if not isinstance(pair, torch.fx.Node) or not _is_max_with_dim(pair):
        return None
    pick = {0: "values", 1: "indices", "values": "values", "indices": "indices"}.get(which)
    if pick is None:
        return None
    name = pair.target if pair.op == "call_method" else pair.target.__name__
    x = pair.args[0]
    dim = int(pair.kwargs.get("dim", pair.args[1] if len(pair.args) > 1 else 0))
    keepdim = bool(pair.kwargs.get("keepdim", pair.args[2] if len(pair.args) > 2 else False))
    if pick == "values":
        fn = torch.amax if name == "max" else torch.amin
    else:
        fn = torch.argmax if name == "max" else torch.argmin

    def body(values: list[Any]) -> Any:
        return fn(values[0], dim=dim, keepdim=keepdim)

    return body, [x]


_BY_FUNCTION: dict[Any, Callable[[dict[str, Any]], tuple[Rewrite, list[Any]] | None]] = {
    F.batch_norm: _batch_norm,
    F.instance_norm: _instance_norm,
    F.group_norm: _group_norm,
    F.mse_loss: pairwise("mse"),
    F.l1_loss: pairwise("l1"),
    F.huber_loss: pairwise("huber"),
    F.smooth_l1_loss: pairwise("smooth_l1"),
    F.cross_entropy: cross_entropy,
    F.triplet_margin_loss: triplet_margin,
    F.scaled_dot_product_attention: attention,
}
