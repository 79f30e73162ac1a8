"""Analysis: a JSON plan of which operators to replace or fuse, bounded by the ambition level.

In region mode the plan is made from the framework's partition and the profile instead: the model picks
among the regions the ambition offers (a menu with each region's kind, PyTorch lines and measured share)
and writes one line of plan per kernel, which the region writer's prompt then carries."""

from __future__ import annotations

import json
import time
from typing import Any

from langgraph.runtime import Runtime

from nodes.context import Context, settings
from nodes.model.llm import shared_model
from nodes.prompt_files import build_messages, fragment
from nodes.state import State, event
from regions.model import Region, RegionError
from regions.offering import offered
from retrieval_corpus.corpus import CATEGORIES

# The grammar bounds a region plan's strings: a small model's free text runs on (89 s for one analysis
# on this host under load, most of it a summary nobody reads), and a plan line is meant to be one line.
PLAN_LINE = 240
PLAN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "summary": {"type": "string"},
        "ops": {
            "type": "array",
            "maxItems": 8,
            "items": {
                "type": "object",
                "properties": {
                    "op": {"type": "string"},
                    "action": {"type": "string", "enum": ["replace", "fuse", "keep"]},
                    "category": {"type": "string", "enum": list(CATEGORIES)},
                },
                "required": ["op", "action", "category"],
            },
        },
    },
    "required": ["summary", "ops"],
}


def analyse(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Ask the model for a plan of ops to replace or fuse (whole programs); on a re-plan it also sees what
    the previous plan led to."""
    return _plan(state, settings(runtime), None)


def analyse_regions(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Region mode: the model picks among the offered regions and writes a plan line per kernel; a task
    region mode cannot do gets a program plan, as generation falls back to a whole program."""
    ctx = settings(runtime)
    return _plan(state, ctx, _region_menu(state, ctx))


def _plan(
    state: State, ctx: Context, menu: tuple[list[tuple[Region, Any]], dict[str, float]] | None
) -> dict[str, Any]:
    started = time.perf_counter()
    previous = state.get("plan")
    tried = ""
    if previous:
        feedback = state.get("feedback") or {}
        summary, error = str(previous.get("summary", "")), str(feedback.get("error", ""))
        tried = fragment("analysis/replan", {"summary": summary, "error": error})
    values = {
        "source": state["task"]["source"].strip(),
        "profile": ((state.get("profile") or {}).get("text") or ""),
        "previous": tried,
    }
    ids = [r.id for r, _ in menu[0]] if menu is not None else []
    if menu is not None:
        node, schema = "region_analysis", region_plan_schema(ids)
        values["regions"] = menu_text(menu[0], menu[1])
    else:
        node, schema = "analysis", PLAN_SCHEMA
    messages = build_messages(node, ctx.lead, ctx.backend, ctx.prompts, values)
    reply = shared_model().chat(
        messages,
        max_tokens=max(128, ctx.max_tokens // 4),
        temperature=0.0,
        seed=ctx.seed,
        json_schema=schema,
    )
    plan = parse_plan(reply.text) if menu is None else parse_region_plan(reply.text, ids)
    trace = event(
        "analysis",
        state.get("round", 0),
        seconds=time.perf_counter() - started,
        messages=messages,
        completion=reply.text,
        prompt_tokens=reply.prompt_tokens,
        completion_tokens=reply.completion_tokens,
        inputs={"replan": bool(previous), "ambition": ctx.lead},
        outputs={
            "summary": plan["summary"][:200],
            "ops": len(plan.get("ops") or plan.get("regions") or []),
            "valid": plan["valid"],
            "format": plan.get("format", "program"),
        },
    )
    return {"plan": plan, "events": [trace]}


def parse_plan(text: str) -> dict[str, Any]:
    """The plan as a dict; a reply that is not the schema's JSON keeps its text as summary, marked invalid."""
    try:
        data = json.loads(text)
        ops = [
            {"op": str(o["op"]), "action": str(o["action"]), "category": str(o["category"])}
            for o in data.get("ops") or []
            if isinstance(o, dict) and {"op", "action", "category"} <= set(o)
        ]
        return {"summary": str(data.get("summary", "")), "ops": ops, "valid": True}
    except (ValueError, TypeError, AttributeError):
        return {"summary": text.strip()[:500], "ops": [], "valid": False}


def _region_menu(state: State, ctx: Context) -> tuple[list[tuple[Region, Any]], dict[str, float]] | None:
    """The offered regions and their measured shares; None where the plan is a program's (the cpu backend,
    a task the framework cannot cut: generation falls back alike)."""
    if ctx.backend != "cuda":
        return None
    try:
        return offered(state["task"]["source"], ctx.lead, state.get("profile"))
    except RegionError:
        return None


def menu_text(parts: list[tuple[Region, Any]], shares: dict[str, float]) -> str:
    """One block per offered region: id, kind, measured share (where profiled) and its PyTorch lines."""
    blocks = []
    for region, _ in parts:
        share = f", {100 * shares[region.id]:.0f}% of the measured GPU time" if region.id in shares else ""
        lines = "\n".join(f"    {step.code}" for step in region.steps)
        blocks.append(f"- {region.id} ({region.kind}{share}):\n{lines}")
    return "\n".join(blocks)


def region_plan_schema(ids: list[str]) -> dict[str, Any]:
    """The region plan's JSON schema: regions chosen from the offered ids, one line of plan each."""
    return {
        "type": "object",
        "properties": {
            "summary": {"type": "string", "maxLength": 200},
            "regions": {
                "type": "array",
                "minItems": 1,
                "maxItems": len(ids),
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string", "enum": ids},
                        "plan": {"type": "string", "maxLength": PLAN_LINE},
                    },
                    "required": ["id", "plan"],
                },
            },
        },
        "required": ["summary", "regions"],
    }


def parse_region_plan(text: str, ids: list[str]) -> dict[str, Any]:
    """The chosen regions in graph order, each with its plan line (at most PLAN_LINE characters). A reply
    that is not the schema's JSON, or chooses nothing offered, plans every offered region without a note."""
    chosen: dict[str, str] = {}
    summary, valid = "", False
    try:
        data = json.loads(text)
        summary = str(data.get("summary", ""))
        for item in data.get("regions") or []:
            if isinstance(item, dict) and item.get("id") in ids:
                chosen.setdefault(str(item["id"]), " ".join(str(item.get("plan", "")).split())[:PLAN_LINE])
        valid = bool(chosen)
    except (ValueError, TypeError, AttributeError):
        summary = text.strip()[:500]
    if not chosen:
        chosen = dict.fromkeys(ids, "")
    regions = [{"id": rid, "plan": chosen[rid]} for rid in ids if rid in chosen]
    return {"summary": summary, "regions": regions, "valid": valid, "format": "regions"}
