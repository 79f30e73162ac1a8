"""Composite ops rewritten as the ops the loop kinds cover, as TorchInductor's decompositions do.

A batch norm in training mode is a mean and a variance over (N, H, W) and a pointwise step; a group norm
the same over each group's view; a loss a pointwise step and a mean; attention two products around a
softmax; an einsum of two operands a permuted, reshaped product; `torch.max(x, dim)[0]` is `amax`. Each
rewrite is a small PyTorch function traced by fx and spliced in place of the composite node, so the steps
still read as functional PyTorch, and every region the rewrite yields gets a contract of its kind. Shapes
are those of the traced inputs (KernelBench shapes are fixed), so the caller propagates shapes before and
after. A node whose arguments fall outside what a rewrite reproduces exactly (dropout, an attention mask,
class weights, label smoothing) stays as it is, kept for PyTorch.
"""

from __future__ import annotations

import math
import operator
import string
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch.fx.operator_schemas import normalize_function

# node.meta key: `op:instance` of the op a rewritten node came from, so a profile's call of it finds its steps
ORIGIN = "kg_origin"
Rewrite = Callable[[list[Any]], Any]  # the composite's tensors in, its value out, built from covered ops


def decompose(gm: torch.fx.GraphModule) -> bool:
    """Rewrite every composite node of `gm` that has a decomposition and whose inputs have shapes; True
    when the graph changed: the caller propagates shapes and calls again (a rewrite that reads another's
    output waits for the next call)."""
    changed = False
    for node in list(gm.graph.nodes):
        if not all("type" in n.meta for n in node.all_input_nodes):  # made by a rewrite this pass
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
        return _einsum(node)
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


def _shape(value: Any) -> tuple[int, ...]:
    return tuple(int(d) for d in value.meta["tensor_meta"].shape)


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
    ndim, eps = len(_shape(x)), float(a["eps"])
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
    ndim, eps = len(_shape(x)), float(a["eps"])
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
    shape, groups, eps = _shape(x), int(a["num_groups"]), float(a["eps"])
    given, present = _present(a, ("input", "weight", "bias"))

    def body(values: list[Any]) -> Any:
        x, weight, bias = _filled(values, present)
        grouped = x.reshape(shape[0], groups, -1)
        mean = torch.mean(grouped, dim=2, keepdim=True)
        var = torch.var(grouped, dim=2, keepdim=True, unbiased=False)
        y = ((grouped - mean) * torch.rsqrt(var + eps)).reshape(shape)
        return _affine(y, weight, bias, _channel_view(len(shape)))

    return body, given


# ---- losses ------------------------------------------------------------------------------------------------


def _reduced(loss: Any, reduction: str) -> Any:
    if reduction == "mean":
        return torch.mean(loss)
    if reduction == "sum":
        return torch.sum(loss)
    return loss


def _pairwise(kind: str) -> Callable[[dict[str, Any]], tuple[Rewrite, list[Any]] | None]:
    """mse, l1, huber and smooth-L1 losses: a pointwise step on (input - target) and the reduction."""

    def plan(a: dict[str, Any]) -> tuple[Rewrite, list[Any]] | None:
        reduction = a["reduction"]
        if (
            reduction not in ("mean", "sum", "none")
            or a.get("weight") is not None
            or _shape(a["input"]) != _shape(a["target"])
        ):
            return None
        delta = float(a.get("delta", a.get("beta", 1.0)))
        if kind == "smooth_l1" and delta == 0.0:
            return None

        def body(values: list[Any]) -> Any:
            d = values[0] - values[1]
            if kind == "mse":
                return _reduced(d * d, reduction)
            ad = torch.abs(d)
            if kind == "l1":
                return _reduced(ad, reduction)
            near = torch.clamp_max(ad, delta)  # |d| below delta, else delta: one formula for both sides
            loss = near * (ad - 0.5 * near)
            return _reduced(loss / delta if kind == "smooth_l1" else loss, reduction)

        return body, [a["input"], a["target"]]

    return plan


def _cross_entropy(a: dict[str, Any]) -> tuple[Rewrite, list[Any]] | None:
    """Class-index targets of a (N, C) input, no class weights or label smoothing: the log-softmax row
    picked at each target, negated, reduced. A target equal to ignore_index (-100 unless set) is not
    skipped but read: such inputs fail the strict check rather than pass unnoticed."""
    x, target = a["input"], a["target"]
    meta = target.meta.get("tensor_meta") if isinstance(target, torch.fx.Node) else None
    if (
        meta is None
        or meta.dtype.is_floating_point
        or len(_shape(x)) != 2
        or a["weight"] is not None
        or float(a["label_smoothing"]) != 0.0
        or a["reduction"] not in ("mean", "sum", "none")
    ):
        return None
    reduction = a["reduction"]

    def body(values: list[Any]) -> Any:
        x, target = values
        picked = torch.gather(torch.log_softmax(x, dim=1), 1, target.unsqueeze(1)).squeeze(1)
        return _reduced(-picked, reduction)

    return body, [x, target]


def _triplet_margin(a: dict[str, Any]) -> tuple[Rewrite, list[Any]] | None:
    if float(a["p"]) != 2.0 or a["swap"] or a["reduction"] not in ("mean", "sum", "none"):
        return None
    margin, eps, reduction = float(a["margin"]), float(a["eps"]), a["reduction"]

    def body(values: list[Any]) -> Any:
        anchor, positive, negative = values
        near = torch.sqrt(torch.sum(torch.square(anchor - positive + eps), dim=-1))
        far = torch.sqrt(torch.sum(torch.square(anchor - negative + eps), dim=-1))
        return _reduced(torch.clamp_min(near - far + margin, 0.0), reduction)

    return body, [a["anchor"], a["positive"], a["negative"]]


# ---- attention and einsum ----------------------------------------------------------------------------------


def _attention(a: dict[str, Any]) -> tuple[Rewrite, list[Any]] | None:
    """softmax(q k^T * scale [causal: -inf above the diagonal]) v, without dropout, masks or GQA."""
    q, k = a["query"], a["key"]
    if a["attn_mask"] is not None or float(a["dropout_p"]) != 0.0 or a.get("enable_gqa"):
        return None
    (length, width), keys = _shape(q)[-2:], _shape(k)[-2]
    scale = float(a["scale"]) if a["scale"] is not None else 1.0 / math.sqrt(width)
    causal = bool(a["is_causal"])

    def body(values: list[Any]) -> Any:
        q, k, v = values
        scores = torch.matmul(q, k.transpose(-2, -1)) * scale
        if causal:
            above = torch.ones(length, keys, dtype=torch.bool, device=q.device).triu(1)
            scores = scores.masked_fill(above, float("-inf"))
        return torch.matmul(torch.softmax(scores, dim=-1), v)

    return body, [q, k, a["value"]]


def _einsum(node: torch.fx.Node) -> tuple[Rewrite, list[Any]] | None:
    """Two operands, every index in the output or in both operands, no repeated index: a product of the
    operands permuted to (batch, free, summed) and (batch, summed, free), reshaped and permuted back."""
    if len(node.args) != 3 or node.kwargs or not isinstance(node.args[0], str):
        return None
    spec, left, right = node.args
    parsed = _einsum_spec(spec)
    if parsed is None:
        return None
    a_idx, b_idx, out_idx = parsed
    if len(a_idx) != len(_shape(left)) or len(b_idx) != len(_shape(right)):
        return None
    sizes = dict(zip(a_idx, _shape(left), strict=True)) | dict(zip(b_idx, _shape(right), strict=True))
    batch = [c for c in out_idx if c in a_idx and c in b_idx]
    a_free = [c for c in out_idx if c in a_idx and c not in b_idx]
    b_free = [c for c in out_idx if c in b_idx and c not in a_idx]
    summed = [c for c in a_idx if c in b_idx and c not in out_idx]
    covered = set(out_idx) | set(summed)  # an index summed within one operand alone has no product form
    if sorted(batch + a_free + b_free) != sorted(out_idx) or set(a_idx) | set(b_idx) != covered:
        return None

    def size(letters: list[str]) -> int:
        return math.prod(sizes[c] for c in letters)

    lead = [size(batch)] if batch else []
    order = batch + a_free + b_free

    def operand(value: Any, letters: str, order: list[str], shape: list[int]) -> Any:
        perm = [letters.index(c) for c in order]
        if perm != sorted(perm):
            value = value.permute(*perm)
        return value if [sizes[c] for c in order] == shape else value.reshape(*shape)

    def body(values: list[Any]) -> Any:
        x = operand(values[0], a_idx, batch + a_free + summed, [*lead, size(a_free), size(summed)])
        w = operand(values[1], b_idx, batch + summed + b_free, [*lead, size(summed), size(b_free)])
        product = torch.matmul(x, w)
        if [*lead, size(a_free), size(b_free)] != [sizes[c] for c in order]:
            product = product.reshape(*[sizes[c] for c in order])
        perm = [order.index(c) for c in out_idx]
        return product if perm == sorted(perm) else product.permute(*perm)

    return body, [left, right]


def _einsum_spec(spec: str) -> tuple[str, str, str] | None:
    text = spec.replace(" ", "")
    if "->" not in text or "..." in text:
        return None
    inputs, out = text.split("->")
    parts = inputs.split(",")
    if len(parts) != 2 or any(not p or not set(p) <= set(string.ascii_letters) for p in parts):
        return None
    if any(len(set(p)) != len(p) for p in (*parts, out)):
        return None
    return parts[0], parts[1], out


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
    F.mse_loss: _pairwise("mse"),
    F.l1_loss: _pairwise("l1"),
    F.huber_loss: _pairwise("huber"),
    F.smooth_l1_loss: _pairwise("smooth_l1"),
    F.cross_entropy: _cross_entropy,
    F.triplet_margin_loss: _triplet_margin,
    F.scaled_dot_product_attention: _attention,
}
