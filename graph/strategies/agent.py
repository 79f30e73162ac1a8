"""agent: analysis -> retrieval -> generate(n) -> evaluate -> triage -> retry / re-plan / stop -> select."""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from graph.formats import writers
from nodes.context import Context
from nodes.evaluation import after_evaluate, evaluate
from nodes.generation import fan_out
from nodes.select import select
from nodes.state import Input, State
from nodes.triage import after_triage


def build(format: str = "regions") -> StateGraph:
    nodes = writers(format)
    graph = StateGraph(State, context_schema=Context, input_schema=Input)
    graph.add_node("analysis", nodes.analyse)
    graph.add_node("retrieval", nodes.retrieve)
    graph.add_node("generate", nodes.generate)
    graph.add_node("evaluate", evaluate)
    graph.add_node("triage", nodes.triage)
    graph.add_node("select", select)
    graph.add_edge(START, "analysis")
    graph.add_edge("analysis", "retrieval")
    graph.add_conditional_edges("retrieval", fan_out, ["generate"])
    graph.add_edge("generate", "evaluate")
    graph.add_conditional_edges("evaluate", after_evaluate)
    graph.add_conditional_edges("triage", after_triage, ["generate", "analysis"])
    graph.add_edge("select", END)
    return graph
