"""Data-dependent control flow as data: forward traced once per path through its branches, the paths merged
into one graph that computes every feasible path and selects the taken one's result (if-conversion).

torch.fx cannot follow `if x.mean() > 0:`; dynamo specialises on the branch an example takes and guards it.
Here every branch becomes regions instead: a tracer answers each condition from a list of decisions, a
depth-first walk traces each combination, and the merged graph shares the nodes the paths have in common (the
condition itself, any prefix), then selects with `torch.where` on the conditions. Conditions on sizes are
no data: their value is known when shapes propagate, and a path that contradicts one is dropped. The
program stays straight-line code that computes both sides of each data branch, which costs time, never
correctness; a branch that mutates a tensor cannot be computed when not taken, so it is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch.fx import Graph, Node

from regions.model import RegionError
from regions.steps import is_inplace

MAX_PATHS = 8


@dataclass
class Path:
    """One trace: its graph and the conditions met on the way, each with the decision taken."""

    graph: Graph
    conditions: list[tuple[Node, bool]]


def trace_paths(trace: Callable[[list[bool]], Path]) -> list[Path]:
    """Every path through forward's conditions: `trace(decisions)` follows the decisions given, then takes
    True at each new condition. At most MAX_PATHS, else RegionError."""
    paths, pending = [], [[]]
    while pending:
        decisions = pending.pop()
        path = trace(decisions)
        paths.append(path)
        taken = [d for _, d in path.conditions]
        pending.extend(taken[:i] + [not taken[i]] for i in range(len(decisions), len(taken)))
        if len(paths) + len(pending) > MAX_PATHS:
            raise RegionError(f"forward branches on data into more than {MAX_PATHS} paths")
    return paths


def feasible(paths: list[Path], root: torch.nn.Module, inputs: list[Any]) -> list[Path]:
    """The paths whose conditions on sizes (values known before any data) hold for these inputs."""
    kept = []
    for path in paths:
        values = _condition_values(path, root, inputs)
        if all(values.get(node.name, decided) == decided for node, decided in path.conditions):
            kept.append(path)
    if not kept:
        raise RegionError("no path through forward's branches agrees with the inputs' sizes")
    return kept


def if_converted(paths: list[Path]) -> Graph:
    """One graph computing every path, the nodes the paths share computed once, the output selected by the
    paths' data conditions (the last path's output where no earlier path's conditions all hold)."""
    if len(paths) == 1:
        return paths[0].graph
    merged = _Merged()
    outputs, predicates = [], []
    for path in paths:
        env: dict[Node, Node] = {}
        for node in path.graph.nodes:
            if node.op == "output":
                outputs.append(_single(node.args[0], env))
            else:
                env[node] = merged.add(node, env)
        predicates.append([(env[c], d) for c, d in path.conditions if c in env])
    result = outputs[-1]
    for out, conditions in zip(reversed(outputs[:-1]), reversed(predicates[:-1]), strict=True):
        result = merged.call(torch.where, merged.holds(conditions), out, result)
    merged.graph.output(result)
    return merged.graph


def _single(value: Any, env: dict[Node, Node]) -> Node:
    if not isinstance(value, Node):
        raise RegionError("a branch of forward returns something other than one tensor")
    return env[value]


class _Merged:
    """A graph built from several, each node added once however many paths compute it."""

    def __init__(self) -> None:
        self.graph = Graph()
        self.seen: dict[tuple[str, str, str, str], Node] = {}

    def add(self, node: Node, env: dict[Node, Node]) -> Node:
        if node.op in ("call_method", "call_function") and is_inplace(node):
            raise RegionError(
                f"a branch of forward changes a tensor in place ({node.target}), so it cannot run untaken"
            )
        args = torch.fx.map_arg(node.args, env.__getitem__)
        kwargs = torch.fx.map_arg(node.kwargs, env.__getitem__)
        key = (node.op, str(node.target), repr(args), repr(kwargs))
        if key not in self.seen:
            self.seen[key] = self.graph.node_copy(node, env.__getitem__)
        return self.seen[key]

    def call(self, target: Callable[..., Any], *args: Any) -> Node:
        key = ("call_function", str(target), repr(args), "{}")
        if key not in self.seen:
            self.seen[key] = self.graph.call_function(target, args)
        return self.seen[key]

    def holds(self, conditions: list[tuple[Node, bool]]) -> Node:
        """A bool tensor: every condition has its decided value."""
        terms = [c if decided else self.call(torch.logical_not, c) for c, decided in conditions]
        if not terms:
            raise RegionError("two paths through forward take the same data decisions")
        held = terms[0]
        for term in terms[1:]:
            held = self.call(torch.logical_and, held, term)
        return held


def _condition_values(path: Path, root: torch.nn.Module, inputs: list[Any]) -> dict[str, bool]:
    """Each condition that is a Python value when the path runs on `inputs` (a size, not data): name -> bool.
    A path may fail after a size condition it contradicts (that branch was never meant for these sizes);
    failing otherwise is an error."""
    wanted = {node.name for node, _ in path.conditions}
    values: dict[str, bool] = {}

    class Recorder(torch.fx.Interpreter):
        def run_node(self, n: Node) -> Any:
            value = super().run_node(n)
            if n.name in wanted and not isinstance(value, torch.Tensor):
                values[n.name] = bool(value)
            return value

    try:
        Recorder(torch.fx.GraphModule(root, path.graph)).run(*inputs)
    except Exception as exc:
        if all(values.get(node.name, decided) == decided for node, decided in path.conditions):
            why = str(exc).splitlines()[0] if str(exc) else ""
            raise RegionError(
                f"a path through forward's branches fails: {type(exc).__name__}: {why}"
            ) from exc
    return values
