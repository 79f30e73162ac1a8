"""The two formats the model writes in, picked once, when a strategy's graph is built.

`regions` (the default): the framework offers regions and writes everything but each kernel's body; the
generate step is a subgraph that Studio draws (offer, prepare, shape, write, check, repair, assemble; a
task region mode cannot do goes to its `program` step). `program`: the model writes the whole ModelNew
program (the paper's format, the comparison row). Each format brings its own generate, analysis,
retrieval and triage nodes; the strategies wire whichever they are given.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langgraph.graph import END, START, StateGraph

from nodes.analysis import analyse, analyse_regions
from nodes.context import FORMATS, Context
from nodes.generation import generate
from nodes.region_generation import (
    after_check,
    after_offer,
    after_prepare,
    assemble_candidate,
    check_answer,
    offer,
    prepare,
    repair,
    shape,
    write,
)
from nodes.retrieval import retrieve, retrieve_regions
from nodes.state import Generated, RegionDraft, SampleInput
from nodes.triage import triage, triage_regions


@dataclass(frozen=True)
class Writers:
    """The nodes a format puts into a strategy graph."""

    generate: Any  # a node function or a compiled subgraph, fanned out per sample with Send
    analyse: Callable[..., dict[str, Any]]
    retrieve: Callable[..., dict[str, Any]]
    triage: Callable[..., dict[str, Any]]


def writers(format: str) -> Writers:
    """The nodes of `format`; a ValueError names the formats."""
    if format == "program":
        return Writers(generate, analyse, retrieve, triage)
    if format == "regions":
        return Writers(region_writer(), analyse_regions, retrieve_regions, triage_regions)
    raise ValueError(f"unknown format {format!r}; known: {', '.join(FORMATS)}")


def region_writer() -> Any:
    """The generate step in region mode: one sample's region candidate, step by step."""
    graph = StateGraph(RegionDraft, context_schema=Context, input_schema=SampleInput, output_schema=Generated)
    graph.add_node("offer", offer)
    graph.add_node("prepare", prepare)
    graph.add_node("shape", shape)
    graph.add_node("write", write)
    graph.add_node("check", check_answer)
    graph.add_node("repair", repair)
    graph.add_node("assemble", assemble_candidate)
    graph.add_node("program", generate)
    graph.add_edge(START, "offer")
    graph.add_conditional_edges("offer", after_offer)
    graph.add_conditional_edges("prepare", after_prepare)
    graph.add_edge("shape", "prepare")
    graph.add_edge("write", "check")
    graph.add_conditional_edges("check", after_check)
    graph.add_edge("repair", "check")
    graph.add_edge("assemble", END)
    graph.add_edge("program", END)
    return graph.compile(name="write_regions")
