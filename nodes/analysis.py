"""Analysis: a JSON plan of which operators to replace or fuse, bounded by the ambition level."""

from __future__ import annotations

import json
import time
from typing import Any

from langgraph.runtime import Runtime

from graph.context import Context, settings
from graph.state import State, event
from nodes.model.llm import shared_model
from nodes.prompt_files import build_messages, fragment
from retrieval_corpus.corpus import CATEGORIES

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
    """Ask the model for a plan; on a re-plan it also sees what the previous plan led to."""
    ctx = settings(runtime)
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
    messages = build_messages("analysis", ctx.ambition, ctx.backend, ctx.prompts, values)
    reply = shared_model().chat(
        messages,
        max_tokens=max(128, ctx.max_tokens // 4),
        temperature=0.0,
        seed=ctx.seed,
        json_schema=PLAN_SCHEMA,
    )
    plan = parse_plan(reply.text)
    trace = event(
        "analysis",
        state.get("round", 0),
        seconds=time.perf_counter() - started,
        messages=messages,
        completion=reply.text,
        prompt_tokens=reply.prompt_tokens,
        completion_tokens=reply.completion_tokens,
        inputs={"replan": bool(previous), "ambition": ctx.ambition},
        outputs={"summary": plan["summary"][:200], "ops": len(plan["ops"]), "valid": plan["valid"]},
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
