"""The four strategy graphs: uncompiled builders, and one call to compile any of them.

Builders import their strategy module on first call, so what only needs a name from `graph` (run.py's
flags, the runner) does not load every node, the region framework and torch.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from langgraph.graph import StateGraph

from nodes.context import STRATEGIES


def _lazy(strategy: str) -> Callable[[str], StateGraph]:
    def build(format: str = "regions") -> StateGraph:
        return importlib.import_module(f"graph.strategies.{strategy}").build(format)

    build.__name__ = f"build_{strategy}"
    build.__doc__ = f"Uncompiled StateGraph of the {strategy} strategy in a format (graph.formats)."
    return build

BUILDERS: dict[str, Callable[[str], StateGraph]] = {name: _lazy(name) for name in STRATEGIES}


def compile_graph(name: str, checkpointer: Any = None, format: str = "regions") -> Any:
    """Compile a strategy by name in a format, "regions" or "program" (graph.formats), with a checkpointer
    for durable runs, without one for Studio."""
    try:
        builder = BUILDERS[name]
    except KeyError:
        raise KeyError(f"unknown strategy {name!r}; known: {', '.join(BUILDERS)}") from None
    return builder(format).compile(checkpointer=checkpointer, name=name)
