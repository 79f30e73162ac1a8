"""The four strategy graphs for LangGraph Studio (`langgraph dev`), compiled without a checkpointer.

`langgraph dev` brings its own persistence and refuses graphs that carry one; the runner compiles the
same builders with its SQLite checkpointer instead. Every run takes `{"task": ...}` as its input
(`nodes.state.Input`) and the `Context` (samples, rounds, ambition, prompt overrides, ...) as its context;
Studio shows both as forms.
"""

from __future__ import annotations

from typing import Any

from graph import compile_graph
from graph.runner.model_hook import install_for_process
from nodes.context import STRATEGIES

install_for_process()  # a no-op unless a test names a scripted model in KERNELGRAPH_TEST_MODEL

GRAPHS: dict[str, Any] = {name: compile_graph(name) for name in STRATEGIES}
globals().update(GRAPHS)  # one module attribute per strategy: langgraph.json's "./graph/studio.py:<name>"
