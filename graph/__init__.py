"""The four strategy graphs: uncompiled builders, and one call to compile any of them.

Builders import their strategy module on first call, so ``import nodes.state`` (the runner, the nodes)
stays light and free of import cycles.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from langgraph.graph import StateGraph

from nodes.context import STRATEGIES


def _lazy(strategy: str) -> Callable[[], StateGraph]:
    def build() -> StateGraph:
        return importlib.import_module(f"graph.strategies.{strategy}").build()

    build.__name__ = f"build_{strategy}"
    build.__doc__ = f"Uncompiled StateGraph of the {strategy} strategy."
    return build


BUILDERS: dict[str, Callable[[], StateGraph]] = {name: _lazy(name) for name in STRATEGIES}


def compile_graph(name: str, checkpointer: Any = None) -> Any:
    """Compile a strategy by name (with a checkpointer for durable runs, without one for Studio)."""
    try:
        builder = BUILDERS[name]
    except KeyError:
        raise KeyError(f"unknown strategy {name!r}; known: {', '.join(BUILDERS)}") from None
    return builder().compile(checkpointer=checkpointer, name=name)
