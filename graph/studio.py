"""The four strategy graphs in both formats for LangGraph Studio (`langgraph dev`), without a checkpointer.

`langgraph dev` brings its own persistence and refuses graphs that carry one; the runner compiles the
same builders with its SQLite checkpointer instead. Every run takes `{"task": ...}` as its input
(`nodes.state.Input`) and the `Context` (samples, rounds, ambition, prompt overrides, ...) as its context;
Studio shows both as forms.
"""

from __future__ import annotations

from typing import Any

from graph import compile_graph
from nodes.context import STRATEGIES

# Each strategy in region mode under its own name, and in whole programs as `<name>_program`.
GRAPHS: dict[str, Any] = {name: compile_graph(name) for name in STRATEGIES} | {
    f"{name}_program": compile_graph(name, format="program") for name in STRATEGIES
}
globals().update(GRAPHS)  # one module attribute per graph: langgraph.json's "./graph/studio.py:<name>"
