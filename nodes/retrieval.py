"""Retrieval: the corpus examples closest to the plan, for the generation prompt.

In region mode each region the plan keeps gets kernel-only examples of its own kind (a corpus region with
its body, rendered as a contract: retrieval_corpus.region_examples), found by the region's PyTorch lines."""

from __future__ import annotations

import time
from typing import Any

from langgraph.runtime import Runtime

from nodes.context import Context, settings
from nodes.state import State, event
from regions.offering import offered
from regions.skeleton import c_names
from retrieval_corpus.region_examples import from_hit
from tools.retriever import search_examples

REGION_POOL = 64  # the whole corpus ranked before the kind filter (few examples carry region bodies)
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


def retrieve_regions(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Up to retrieval_k region examples for each planned region: the search ranks the corpus by the
    region's PyTorch lines, and only examples of the region's kind (map, reduce, contraction) are kept. A
    program plan (region mode fell back) gets the whole-program examples."""
    if not (state.get("plan") or {}).get("regions"):
        return retrieve(state, runtime)
    ctx = settings(runtime)
    started = time.perf_counter()
    planned = {p["id"] for p in state["plan"]["regions"]}
    parts, _ = offered(state["task"]["source"], ctx.lead, state.get("profile"))
    examples: list[dict[str, Any]] = []
    queries = {}
    for region, _ in parts:
        if region.id not in planned or ctx.retrieval_k <= 0:
            continue
        queries[region.id] = " ".join(step.code for step in region.steps)[:400]
        names = [c_names(region)[t.name] for t in region.inputs]
        found = [
            shown.renamed(names)
            for hit in search_examples(f"{region.kind} {queries[region.id]}", REGION_POOL, None)
            for shown in from_hit(hit)
            if shown.kind == region.kind
        ]
        found.sort(key=lambda shown: len(shown.names) != len(names))  # same arity first: shown in its names
        examples += [
            {"id": f"{s.example_id}/{s.region_id}", "region": region.id, "kind": s.kind, "text": s.text()}
            for s in found[: ctx.retrieval_k]
        ]
    trace = event(
        "retrieval",
        state.get("round", 0),
        seconds=time.perf_counter() - started,
        inputs={"queries": queries, "k": ctx.retrieval_k, "format": "regions"},
        outputs={"examples": _ids_by_region(examples)},
    )
    return {"examples": examples, "events": [trace]}


def _ids_by_region(examples: list[dict[str, Any]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for e in examples:
        out.setdefault(e["region"], []).append(e["id"])
    return out
