"""Decompositions of losses, attention and einsum into the ops the loop kinds cover (regions.decompose
splices them): a loss is a pointwise step and a mean, attention two products around a softmax, an einsum
of two operands a permuted, reshaped product. Each returns the rewrite and the graph values it reads, or
None where the call's arguments fall outside what the rewrite reproduces exactly (an attention mask or
dropout, class weights, label smoothing): that node stays, kept for PyTorch."""

from __future__ import annotations

import math
import string
from collections.abc import Callable
from typing import Any

import torch

Rewrite = Callable[[list[Any]], Any]  # the composite's tensors in, its value out, built from covered ops


def traced_shape(value: Any) -> tuple[int, ...]:
    """A graph value's traced shape."""
    return tuple(int(d) for d in value.meta["tensor_meta"].shape)


# ---- losses ------------------------------------------------------------------------------------------------


def _reduced(loss: Any, reduction: str) -> Any:
    if reduction == "mean":
        return torch.mean(loss)
    if reduction == "sum":
        return torch.sum(loss)
    return loss


def pairwise(kind: str) -> Callable[[dict[str, Any]], tuple[Rewrite, list[Any]] | None]:
    """mse, l1, huber and smooth-L1 losses: a pointwise step on (input - target) and the reduction."""

    def plan(a: dict[str, Any]) -> tuple[Rewrite, list[Any]] | None:
        reduction = a["reduction"]
        if (
            reduction not in ("mean", "sum", "none")
            or a.get("weight") is not None
            or traced_shape(a["input"]) != traced_shape(a["target"])
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


def cross_entropy(a: dict[str, Any]) -> tuple[Rewrite, list[Any]] | None:
    """Class-index targets of a (N, C) input, no class weights or label smoothing: the log-softmax row
    picked at each target, negated, reduced. A target equal to ignore_index (-100 unless set) is not
    skipped but read: such inputs fail the strict check rather than pass unnoticed."""
    return _picked(a, log_softmax_first=True)


def nll_loss(a: dict[str, Any]) -> tuple[Rewrite, list[Any]] | None:
    """Log-probabilities of a (N, C) input picked at class-index targets, negated, reduced: cross_entropy
    without its log-softmax, on the same conditions."""
    return _picked(a, log_softmax_first=False)


def _picked(a: dict[str, Any], log_softmax_first: bool) -> tuple[Rewrite, list[Any]] | None:
    x, target = a["input"], a["target"]
    meta = target.meta.get("tensor_meta") if isinstance(target, torch.fx.Node) else None
    if (
        meta is None
        or meta.dtype.is_floating_point
        or len(traced_shape(x)) != 2
        or a["weight"] is not None
        or float(a.get("label_smoothing", 0.0)) != 0.0
        or a["reduction"] not in ("mean", "sum", "none")
    ):
        return None
    reduction = a["reduction"]

    def body(values: list[Any]) -> Any:
        x, target = values
        log_p = torch.log_softmax(x, dim=1) if log_softmax_first else x
        return _reduced(-torch.gather(log_p, 1, target.unsqueeze(1)).squeeze(1), reduction)

    return body, [x, target]


def bce_with_logits(a: dict[str, Any]) -> tuple[Rewrite, list[Any]] | None:
    """(1 - target) * x - log_sigmoid(x), reduced, as ATen computes it; log_sigmoid(x) written out as
    min(x, 0) - log1p(exp(-|x|)). Without class or positive weights."""
    if (
        a["weight"] is not None
        or a["pos_weight"] is not None
        or a["reduction"] not in ("mean", "sum", "none")
        or traced_shape(a["input"]) != traced_shape(a["target"])
    ):
        return None
    reduction = a["reduction"]

    def body(values: list[Any]) -> Any:
        x, target = values
        log_sigmoid = torch.clamp_max(x, 0.0) - torch.log1p(torch.exp(-torch.abs(x)))
        return _reduced((1 - target) * x - log_sigmoid, reduction)

    return body, [a["input"], a["target"]]


def margin_ranking(a: dict[str, Any]) -> tuple[Rewrite, list[Any]] | None:
    """max(0, -target * (input1 - input2) + margin), reduced."""
    if a["reduction"] not in ("mean", "sum", "none"):
        return None
    margin, reduction = float(a["margin"]), a["reduction"]

    def body(values: list[Any]) -> Any:
        x1, x2, target = values
        return _reduced(torch.clamp_min(-target * (x1 - x2) + margin, 0.0), reduction)

    return body, [a["input1"], a["input2"], a["target"]]


def soft_margin(a: dict[str, Any]) -> tuple[Rewrite, list[Any]] | None:
    """log(1 + exp(-target * input)), reduced, as ATen writes it."""
    if a["reduction"] not in ("mean", "sum", "none"):
        return None
    reduction = a["reduction"]

    def body(values: list[Any]) -> Any:
        x, target = values
        return _reduced(torch.log1p(torch.exp(-x * target)), reduction)

    return body, [a["input"], a["target"]]


def triplet_margin(a: dict[str, Any]) -> tuple[Rewrite, list[Any]] | None:
    if float(a["p"]) != 2.0 or a["swap"] or a["reduction"] not in ("mean", "sum", "none"):
        return None
    margin, eps, reduction = float(a["margin"]), float(a["eps"]), a["reduction"]

    def body(values: list[Any]) -> Any:
        anchor, positive, negative = values
        near = torch.sqrt(torch.sum(torch.square(anchor - positive + eps), dim=-1))
        far = torch.sqrt(torch.sum(torch.square(anchor - negative + eps), dim=-1))
        return _reduced(torch.clamp_min(near - far + margin, 0.0), reduction)

    return body, [a["anchor"], a["positive"], a["negative"]]


# ---- norms ------------------------------------------------------------------------------------------------


def _p_norm(x: Any, order: float, dim: Any = None, keepdim: bool = False) -> Any:
    """The 1- or 2-norm over `dim` (every element where None): the magnitudes summed, or the squares
    summed and their root."""
    magnitude = torch.abs(x) if order == 1.0 else x * x
    total = torch.sum(magnitude) if dim is None else torch.sum(magnitude, dim=dim, keepdim=keepdim)
    return total if order == 1.0 else torch.sqrt(total)


def normalize(a: dict[str, Any]) -> tuple[Rewrite, list[Any]] | None:
    """F.normalize: x over its p-norm along dim, the norm kept at least eps (p = 1 or 2)."""
    p, dim, eps = float(a["p"]), a["dim"], float(a["eps"])
    if p not in (1.0, 2.0) or a.get("out") is not None or not isinstance(dim, int):
        return None

    def body(values: list[Any]) -> Any:
        x = values[0]
        return x / torch.clamp_min(_p_norm(x, p, dim, keepdim=True), eps)

    return body, [a["input"]]


def vector_norm(a: dict[str, Any]) -> tuple[Rewrite, list[Any]] | None:
    """torch.linalg.vector_norm and torch.norm of order 2 (or "fro") or 1 over some dims or all. Other
    orders, and a dtype, stay whole."""
    order = a.get("ord", a.get("p"))
    order = 2.0 if order in (None, "fro") else order
    dim = a.get("dim")
    if not isinstance(order, int | float) or float(order) not in (1.0, 2.0) or a.get("dtype") is not None:
        return None
    if dim is not None and not isinstance(dim, int) and not all(isinstance(d, int) for d in dim):
        return None
    keepdim, dims = bool(a.get("keepdim", False)), (dim if dim is None or isinstance(dim, int) else list(dim))

    def body(values: list[Any]) -> Any:
        return _p_norm(values[0], float(order), dims, keepdim)

    return body, [a["input"] if "input" in a else a["x"]]


# ---- attention and einsum ----------------------------------------------------------------------------------


def attention(a: dict[str, Any]) -> tuple[Rewrite, list[Any]] | None:
    """softmax(q k^T * scale [causal: -inf above the diagonal]) v, without dropout, masks or GQA."""
    q, k = a["query"], a["key"]
    if a["attn_mask"] is not None or float(a["dropout_p"]) != 0.0 or a.get("enable_gqa"):
        return None
    (length, width), keys = traced_shape(q)[-2:], traced_shape(k)[-2]
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


def vector_product(node: torch.fx.Node) -> tuple[Rewrite, list[Any]] | None:
    """torch.matmul with a 1-D operand: the vector as a one-column (or one-row) matrix, the product, the
    unit dim dropped; the product then has a contract (a matrix times a column is the `dot` shape's)."""
    if len(node.args) != 2 or node.kwargs:
        return None
    a, b = node.args
    if not all(isinstance(v, torch.fx.Node) and "tensor_meta" in v.meta for v in (a, b)):
        return None
    ranks = len(traced_shape(a)), len(traced_shape(b))
    if 1 not in ranks or ranks == (1, 1):
        return None

    def body(values: list[Any]) -> Any:
        x, y = values
        if ranks[1] == 1:
            return torch.matmul(x, y.unsqueeze(-1)).squeeze(-1)
        return torch.matmul(x.unsqueeze(0), y).squeeze(-2)

    return body, [a, b]


def einsum(node: torch.fx.Node) -> tuple[Rewrite, list[Any]] | None:
    """Two operands, every index in the output or in both operands, no repeated index: a product of the
    operands permuted to (batch, free, summed) and (batch, summed, free), reshaped and permuted back."""
    if len(node.args) != 3 or node.kwargs or not isinstance(node.args[0], str):
        return None
    spec, left, right = node.args
    parsed = _einsum_spec(spec)
    if parsed is None:
        return None
    a_idx, b_idx, out_idx = parsed
    a_shape, b_shape = traced_shape(left), traced_shape(right)
    if len(a_idx) != len(a_shape) or len(b_idx) != len(b_shape):
        return None
    sizes = dict(zip(a_idx, a_shape, strict=True)) | dict(zip(b_idx, b_shape, strict=True))
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
