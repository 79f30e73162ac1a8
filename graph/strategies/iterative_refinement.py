"""iterative_refinement: generate(n) -> evaluate -> triage -> generate ... up to k rounds -> select."""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from nodes.context import Context
from nodes.evaluation import after_evaluate, evaluate
from nodes.generation import fan_out, generate
from nodes.select import select
from nodes.state import Input, State
from nodes.triage import triage


def build() -> StateGraph:
    graph = StateGraph(State, context_schema=Context, input_schema=Input)
    graph.add_node("generate", generate)
    graph.add_node("evaluate", evaluate)
    graph.add_node("triage", triage)
    graph.add_node("select", select)
    graph.add_conditional_edges(START, fan_out, ["generate"])
    graph.add_edge("generate", "evaluate")
    graph.add_conditional_edges("evaluate", after_evaluate)
    graph.add_conditional_edges("triage", fan_out, ["generate"])
    graph.add_edge("select", END)
    return graph
