"""Graph moves that put pointwise steps where the kernel beside them fuses them, exactly.

A convolution's bias becomes an add after it where a pointwise op reads the convolution (`bias_apart`), so
the bias joins that map region; a max pool, or a max or min over dims, takes the place of the
non-decreasing pointwise steps that feed it, which then follow it as its epilogue (`pool_first`). Both
leave every value the model computes as it was (bias_apart up to the convolution's own summation order,
pool_first bit for bit). regions.decompose runs them in its passes; shapes are the traced ones, so the
caller propagates shapes after a move.
"""

from __future__ import annotations

import operator

import torch
import torch.nn.functional as F
from torch.fx.operator_schemas import normalize_function

from regions.composites import traced_shape
from regions.steps import MAP, canonical, mutates_shared
from regions.window import MAX_POOL

# node.meta key: the name a move gives a node it makes, instead of t<n> (a parameter's view reads as one)
NAME = "kg_name"


def channel_view(ndim: int) -> list[int]:
    """The view of a per-channel vector that broadcasts over an (N, C, ...) tensor of `ndim` dims."""
    return [1, -1] + [1] * (ndim - 2)


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
        view = gm.graph.call_method("view", (bias, channel_view(len(traced_shape(node)))))
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
        pair = normalize_function(
            node.target, tuple(node.args), dict(node.kwargs), normalize_to_only_use_kwargs=True
        )
        if pair is None or pair.kwargs.get("return_indices"):
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
