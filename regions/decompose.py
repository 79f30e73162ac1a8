"""Composite ops rewritten as the ops the loop kinds cover, as TorchInductor's decompositions do.

A batch norm in training mode is a mean and a variance over (N, H, W) and a pointwise step; a group norm
the same over each group's view; F.normalize and a vector norm of order 1 or 2 a sum over dim (and a
root, a division); a product with a 1-D operand the same with the vector as a one-column matrix; a loss a
pointwise step and a mean (nll_loss and cross entropy a gather left to PyTorch between them); attention
two products around a softmax; an einsum of two operands a permuted, reshaped product (those in
regions.composites); `torch.max(x, dim)[0]` is `amax`; the moves of regions.moves (a convolution's bias
after it, a max before the non-decreasing steps that feed it) run in the same passes. Each rewrite is a
small PyTorch function traced by fx and spliced in place of the composite node, so the steps still read
as functional PyTorch, and every region the rewrite yields gets a contract of its kind. Shapes are those of
the traced inputs (KernelBench shapes are fixed), so the caller propagates shapes before and after. A node
whose arguments fall outside what a rewrite reproduces exactly (dropout, an attention mask, class weights,
label smoothing) stays as it is, kept for PyTorch. Adaptive average pooling to size 1 is a mean.
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
    bce_with_logits,
    cross_entropy,
    einsum,
    margin_ranking,
    nll_loss,
    normalize,
    pairwise,
    soft_margin,
    traced_shape,
    triplet_margin,
    vector_norm,
    vector_product,
)
from regions.moves import bias_apart, channel_view, pool_first

# node.meta key: `op:instance` of the op a rewritten node came from, so a profile's call of it finds its steps
ORIGIN = "kg_origin"


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


def _plan(gm: torch.fx.GraphModule, node: torch.fx.Node) -> tuple[Rewrite, list[torch.fx.Node]] | None:
    """The rewrite for `node` and the graph values it reads, or None to keep the node."""
    if node.op == "call_module":
        module = gm.get_submodule(str(node.target))
        if isinstance(module, torch.nn.modules.instancenorm._InstanceNorm) and not module.track_running_stats:
            return _module_instance_norm(module, node)
        return None
    if node.op == "call_function" and node.target is torch.einsum:
        return einsum(node)
    if node.op == "call_function" and node.target in (torch.matmul, operator.matmul):
        return vector_product(node)
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
    view, dims = channel_view(ndim), [0, *range(2, ndim)]
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
        return _normalize(x, mean, var, weight, bias, eps, channel_view(ndim))

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
        return _affine(y, weight, bias, channel_view(len(shape)))

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


# ---- pooling -----------------------------------------------------------------------------------------------


def _global_average(dims: int) -> Callable[[dict[str, Any]], tuple[Rewrite, list[Any]] | None]:
    """Adaptive average pooling to size 1 in every pooled dim is the mean over them (Inductor's rewrite
    too): a row reduction whose rows are the maps, a block to each, where the window kind would give each
    whole map to one thread."""

    def plan(a: dict[str, Any]) -> tuple[Rewrite, list[Any]] | None:
        size = a["output_size"]
        sizes = [size] * dims if isinstance(size, int) else list(size)
        if len(sizes) != dims or any(s != 1 for s in sizes):
            return None
        pooled = list(range(-dims, 0))

        def body(values: list[Any]) -> Any:
            return torch.mean(values[0], dim=pooled, keepdim=True)

        return body, [a["input"]]

    return plan


_BY_FUNCTION: dict[Any, Callable[[dict[str, Any]], tuple[Rewrite, list[Any]] | None]] = {
    F.batch_norm: _batch_norm,
    F.instance_norm: _instance_norm,
    F.group_norm: _group_norm,
    F.mse_loss: pairwise("mse"),
    F.l1_loss: pairwise("l1"),
    F.huber_loss: pairwise("huber"),
    F.smooth_l1_loss: pairwise("smooth_l1"),
    F.cross_entropy: cross_entropy,
    F.nll_loss: nll_loss,
    F.binary_cross_entropy_with_logits: bce_with_logits,
    F.normalize: normalize,
    F.margin_ranking_loss: margin_ranking,
    F.soft_margin_loss: soft_margin,
    torch.linalg.vector_norm: vector_norm,
    torch.norm: vector_norm,
    F.triplet_margin_loss: triplet_margin,
    F.scaled_dot_product_attention: attention,
    F.adaptive_avg_pool1d: _global_average(1),
    F.adaptive_avg_pool2d: _global_average(2),
    F.adaptive_avg_pool3d: _global_average(3),
}
