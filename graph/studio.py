"""The four strategy graphs for LangGraph Studio (`langgraph dev`), compiled without a checkpointer.

`langgraph dev` brings its own persistence and refuses graphs that carry one; the runner compiles the
same builders with its SQLite checkpointer instead. Every run takes the `Context` (samples, rounds,
ambition, prompt overrides, ...) as its context, which Studio shows as a form.
"""

from __future__ import annotations

from graph import compile_graph
from graph.runner.model_hook import install_for_process

install_for_process()  # a no-op unless a test names a scripted model in KERNELGRAPH_TEST_MODEL

zero_shot = compile_graph("zero_shot")
profiling_guided = compile_graph("profiling_guided")
iterative_refinement = compile_graph("iterative_refinement")
agent = compile_graph("agent")
