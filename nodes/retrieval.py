"""Retrieval: the corpus examples closest to the plan, for the generation prompt."""

from __future__ import annotations

import time
from typing import Any

from langgraph.runtime import Runtime

from graph.context import Context, settings
from graph.state import State, event
from tools.retriever import search_examples

KEEP = ("id", "title", "category", "techniques", "when_to_use", "speedup", "solution")


def plan_query(state: State) -> tuple[str, str | None]:
    """Query text (plan summary and the ops to change) and the category of the first op to replace or fuse."""
    plan = state.get("plan") or {}
    changed = [op for op in plan.get("ops") or [] if op.get("action") != "keep"]
    words = [str(plan.get("summary", ""))] + [f"{op['op']} {op['category']}" for op in changed]
    query = " ".join(w for w in words if w).strip() or state["task"]["name"].replace("_", " ")
    return query, (changed[0]["category"] if changed else None)


def retrieve(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Top-k examples; a category filter first, widened to the whole corpus when it finds too few."""
    ctx = settings(runtime)
    started = time.perf_counter()
    query, category = plan_query(state)
    found = search_examples(query, ctx.retrieval_k, category) if category else []
    if len(found) < ctx.retrieval_k:
        seen = {hit.get("id") for hit in found}
        found += [hit for hit in search_examples(query, ctx.retrieval_k, None) if hit.get("id") not in seen]
    examples = [{k: hit.get(k) for k in KEEP} for hit in found[: ctx.retrieval_k]]
    trace = event(
        "retrieval",
        state.get("round", 0),
        seconds=time.perf_counter() - started,
        inputs={"query": query[:200], "category": category, "k": ctx.retrieval_k},
        outputs={"examples": [e["id"] for e in examples]},
    )
    return {"examples": examples, "events": [trace]}
