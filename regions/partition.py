"""Cut a traced problem into regions of one kind each, and choose which regions to offer the model.

A map region is a maximal pointwise chain or DAG (a map group whose every reader is in one other map
group joins it), so one kernel computes it at the output's index; every reduce, window (pooling)
and contraction op is a region of its own; everything else is kept, left to PyTorch. Nodes that compute
no tensor (a `.size()`, a tuple) belong to no region: PyTorch evaluates them around the regions.
"""

from __future__ import annotations

import torch

from regions.model import AMBITIONS, Kind, Region, Step, TensorInfo
from regions.reduce import INDEX_OPS
from regions.steps import CALLS, MAP, is_tensor, tensor_info
from regions.trace import Traced
from regions.window import WINDOW

REDUCE = (
    frozenset(
        "torch." + op
        for op in (
            "softmax log_softmax sum mean amax amin max min prod logsumexp norm var std argmax argmin "
            "cumsum cumprod"
        ).split()
    )
    | frozenset(
        "torch.nn.functional." + op for op in "layer_norm group_norm rms_norm normalize softmin".split()
    )
    | {"torch.linalg.vector_norm"}
)
# The kinds whose kernel can take the pointwise steps after it (all of them at aggressive ambition)
FUSES_EPILOGUE: frozenset[Kind] = frozenset({"contraction", "window", "reduce"})
CONTRACTION = frozenset(
    {"torch.matmul", "torch.mm", "torch.bmm", "torch.addmm", "torch.baddbmm", "torch.nn.functional.linear"}
) | frozenset(f"torch.nn.functional.conv{t}{d}d" for t in ("", "_transpose") for d in (1, 2, 3))


def partition(
    traced: Traced, fuse: frozenset[Kind] = frozenset(), apart: frozenset[str] = frozenset()
) -> list[Region]:
    """Regions in graph order (ordered by their output node), ids r0, r1, ...

    With a core kind in `fuse` (FUSES_EPILOGUE: products, pooling windows, reductions) a core op of that
    kind whose only user is a map region of its own output's shape joins that region: one kernel computes
    the core op and its pointwise epilogue (regions.epilogue), and the core's output never makes a round
    trip through memory. Such a region has the core's kind, its first step the core op. Cores whose first
    node is named in `apart` keep their epilogue apart (no contract fits them fused)."""
    graph = traced.gm.graph
    order = {n.name: i for i, n in enumerate(graph.nodes)}
    scalars = dict(traced.scalar_inputs)
    kinds: dict[str, Kind] = {
        n.name: _kind(n, traced, scalars) for n in graph.nodes if n.op in CALLS and is_tensor(n)
    }
    groups: dict[str, list[torch.fx.Node]] = {}  # region output name -> its nodes
    for node in graph.nodes:
        if node.name not in kinds:
            continue
        group = [node]
        if kinds[node.name] == "map":
            # producers it could join: a kept one (a parameter's view) computes no region to join
            joined = [
                p
                for p in node.all_input_nodes
                if p.name in groups and len(p.users) == 1 and kinds[groups[p.name][0].name] != "kept"
            ]
            cores = [
                p
                for p in joined
                if _is_epilogue_of(node, groups[p.name], kinds, fuse) and groups[p.name][0].name not in apart
            ]
            if len(cores) == 1 and len(joined) == 1:
                group = groups.pop(cores[0].name) + group
        groups[node.name] = sorted(group, key=lambda n: order[n.name])
    _merge_shared_maps(groups, kinds, order)  # map producers join their readers' maps
    ordered = sorted(groups.values(), key=lambda nodes: order[nodes[-1].name])
    return [
        _region(f"r{i}", _group_kind(nodes, kinds), nodes, traced, scalars) for i, nodes in enumerate(ordered)
    ]


def _merge_shared_maps(
    groups: dict[str, list[torch.fx.Node]], kinds: dict[str, Kind], order: dict[str, int]
) -> None:
    """A map group whose output every user reads inside one other map group joins that group, until none
    does: a value read twice (`d = a - b` in `d * d`, a loss's `|d|` in two branches) stays in registers
    instead of a round trip through memory and a launch of its own, as Inductor fuses a pointwise DAG.
    A value read by two groups, or by PyTorch, stays a region's output."""
    owner = {n.name: key for key, nodes in groups.items() for n in nodes}
    merged = True
    while merged:
        merged = False
        for key in list(groups):
            nodes = groups.get(key)
            if nodes is None or kinds[nodes[0].name] != "map":
                continue
            readers = {owner.get(user.name) for user in nodes[-1].users}
            if len(readers) != 1 or None in readers or key in readers:
                continue
            (into,) = readers
            if kinds[groups[into][0].name] != "map":
                continue
            groups[into] = sorted(groups.pop(key) + groups[into], key=lambda n: order[n.name])
            owner.update((n.name, into) for n in nodes)
            merged = True


def _is_epilogue_of(
    node: torch.fx.Node, producer: list[torch.fx.Node], kinds: dict[str, Kind], fuse: frozenset[Kind]
) -> bool:
    """`node` (a map) can extend the group ending at `producer`: a core op of a kind in `fuse`, alone or
    with its epilogue so far, computing a tensor of the node's own shape (the epilogue runs at the core's
    output elements), and reading none of the core's own operands: the core's skeleton reads those along
    its loops under their names, so an epilogue could not read one at its output element
    (`x + hardswish(conv(x))`)."""
    first, last = producer[0], producer[-1]
    return (
        kinds[first.name] in fuse
        and all(kinds[n.name] == "map" for n in producer[1:])
        and tensor_info(last).shape == tensor_info(node).shape == tensor_info(first).shape
        and not set(node.all_input_nodes) & set(first.all_input_nodes)
    )


def _group_kind(nodes: list[torch.fx.Node], kinds: dict[str, Kind]) -> Kind:
    """A map chain is a map; a core op with its epilogue has the core's kind."""
    return kinds[nodes[0].name]


def _kind(node: torch.fx.Node, traced: Traced, scalars: dict[str, float]) -> Kind:
    """map/reduce/contraction when one kernel could compute the op from tensors (and, for map, scalars)."""
    target = traced.steps[node.name].target
    if node.name in traced.impure:
        return "kept"
    inputs = node.all_input_nodes
    if not all(is_tensor(n) or (n.name in scalars and target in MAP) for n in inputs):
        return "kept"
    floating = all(_floating(n) for n in inputs if is_tensor(n)) and _floating(node)
    if target in MAP and floating:
        return "map"
    if target in REDUCE and floating:
        return "reduce"
    if target in INDEX_OPS and len(inputs) == 1 and _floating(inputs[0]):
        return "reduce"  # an index reduction: float values in, int64 indices out
    if target in WINDOW and floating and len(inputs) == 1:
        return "window"
    if target in CONTRACTION and floating:
        return "contraction"
    return "kept"


def _floating(node: torch.fx.Node) -> bool:
    return node.meta["tensor_meta"].dtype.is_floating_point


def _region(
    rid: str, kind: Kind, nodes: list[torch.fx.Node], traced: Traced, scalars: dict[str, float]
) -> Region:
    inside = {n.name for n in nodes}
    inputs: list[TensorInfo] = []
    used: list[tuple[str, float]] = []
    for node in nodes:
        for producer in node.all_input_nodes:
            if producer.name in inside:
                continue
            if is_tensor(producer) and all(t.name != producer.name for t in inputs):
                inputs.append(tensor_info(producer))
            elif producer.name in scalars and (producer.name, scalars[producer.name]) not in used:
                used.append((producer.name, scalars[producer.name]))
    steps = [traced.steps[n.name] for n in nodes]
    output = tensor_info(nodes[-1])
    cost = region_cost(kind, steps, inputs, output)
    return Region(rid, kind, [n.name for n in nodes], inputs, output, steps, used, cost)


def region_cost(kind: Kind, steps: list[Step], inputs: list[TensorInfo], output: TensorInfo) -> float:
    """A region's work: flops for a product or convolution, bytes moved for any other kind."""
    if kind == "contraction":
        return _flops(steps[0], inputs)
    return 4.0 * (sum(t.numel for t in inputs) + output.numel)


def _flops(step: Step, inputs: list[TensorInfo]) -> float:
    """2 x M x N x K for products; a convolution multiplies each output by in_channels/groups x kernel."""
    shapes = {t.name: t.shape for t in inputs}
    args = [shapes.get(a, ()) for a in step.args]
    out = step.out.numel
    if "conv" in step.target:
        weight = args[1]
        per_row = 1
        for d in weight[1:]:
            per_row *= d
        if "transpose" in step.target:  # each input element scatters into out_channels/groups x kernel
            x = 1
            for d in args[0]:
                x *= d
            return 2.0 * x * per_row
        return 2.0 * out * per_row
    if step.target == "torch.nn.functional.linear":
        return 2.0 * out * args[1][-1]
    first = args[1] if step.target in ("torch.addmm", "torch.baddbmm") else args[0]
    return 2.0 * out * (first[-1] if first else 1)


def costliest(regions: list[Region], weights: dict[str, float] | None = None) -> Region:
    """The region with the largest measured share (`weights`, from a profile), else the largest estimated
    bytes or flops."""
    measured = weights or {}
    return max(regions, key=lambda r: (measured.get(r.id, -1.0), r.cost))


def offer(
    regions: list[Region], ambition: str = "conservative", weights: dict[str, float] | None = None
) -> list[Region]:
    """The regions the model is asked to write, in graph order.

    conservative: one region: the task's only compute op whatever its kind (a lone matmul, a scalar
    multiply), else the costliest map or reduce region (memory-bound epilogues are where a small model's
    kernel can win), else the costliest window (a model of convolutions and a pooling: measured on level
    3's Inception module, the model's direct convolution ran the task at 0.49x eager); moderate: every
    map, reduce and window (pooling) region, plus that one; aggressive: every region that is not kept.
    "Costliest" is by `weights` (a region's measured share of the reference's time, from a profile)
    where given, else by the estimated bytes or flops.
    """
    if ambition not in AMBITIONS:
        raise ValueError(f"ambition must be one of {', '.join(AMBITIONS)}, not {ambition!r}")
    compute = [r for r in regions if r.kind != "kept"]
    if ambition == "aggressive":
        return compute
    pointwise = [r for r in compute if r.kind in ("map", "reduce")]
    windows = [r for r in compute if r.kind == "window"]
    pool = compute if len(compute) == 1 else pointwise or windows or compute
    best = [costliest(pool, weights)] if pool else []
    if ambition == "conservative":
        return best
    chosen = {r.id for r in pointwise + windows + best}
    return [r for r in compute if r.id in chosen]
