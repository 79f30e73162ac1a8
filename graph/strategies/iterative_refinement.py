"""iterative_refinement: generate(n) -> evaluate -> triage -> generate ... up to k rounds -> select."""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from graph.formats import writers
from nodes.context import Context
from nodes.evaluation import after_evaluate, evaluate
from nodes.generation import fan_out
from nodes.select import select
from nodes.state import Input, State


def build(format: str = "regions") -> StateGraph:
    nodes = writers(format)
    graph = StateGraph(State, context_schema=Context, input_schema=Input)
    graph.add_node("generate", nodes.generate)
    graph.add_node("evaluate", evaluate)
    graph.add_node("triage", nodes.triage)
    graph.add_node("select", select)
    graph.add_conditional_edges(START, fan_out, ["generate"])
    graph.add_edge("generate", "evaluate")
    graph.add_conditional_edges("evaluate", after_evaluate)
    graph.add_conditional_edges("triage", fan_out, ["generate"])
    graph.add_edge("select", END)
    return graph
