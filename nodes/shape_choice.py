"""Shape choice: in the fast second the model picks the launch shape of its own correct kernel.

The framework owns every shape (regions.shapes): their launch code, indices, loads and stores.
The model reads its correct lines, their measured time and the menu of shapes that fit the region, and
answers with a name under a JSON-schema grammar, so the answer is always one of the names. "first" keeps
the launch it has and asks for faster lines instead (the fast second's rewrite). The chosen shape still
has to earn its place: select keeps it only if it is strictly correct and faster.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from nodes.model.llm import ChatBackend, shared_model
from nodes.prompt_files import build_messages
from regions.model import Region
from regions.shapes import FIRST, FIRST_LAUNCH, Shape
from regions.skeleton import c_names, step_code

WHY = 160  # the reason's length bound: a small model's free text runs on


@dataclass
class ShapeChoice:
    """The shape the model chose, why, and what the call cost (for the trace and the candidate)."""

    shape: str
    why: str
    valid: bool  # the reply parsed as the schema's JSON (else the current shape was kept)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    messages: list[dict[str, str]] | None = None


def shape_schema(names: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "shape": {"type": "string", "enum": names},
            "why": {"type": "string", "maxLength": WHY},
        },
        "required": ["shape", "why"],
    }


def menu_text(menu: list[Shape]) -> str:
    """One line per choice: the current launch (kept, the lines rewritten) first, then each shape."""
    lines = [f"- {FIRST}: keep the current launch and rewrite the lines to run faster ({FIRST_LAUNCH})"]
    lines += [f"- {shape.name}: {shape.what}" for shape in menu]
    return "\n".join(lines)


def choose_shape(
    region: Region,
    body: str,
    timing: str,
    menu: list[Shape],
    *,
    model: ChatBackend | None = None,
    prompts: dict[str, str] | None = None,
    ambition: str = "moderate",
    seed: int | None = None,
) -> ShapeChoice:
    """Ask the model which shape its correct body should run on; FIRST where nothing else fits."""
    if not menu:
        return ShapeChoice(FIRST, "no other launch shape fits this region", True)
    names = c_names(region)
    values = {
        "code": "\n".join(step_code(s, names) for s in region.steps),
        "body": body.strip("\n"),
        "timing": timing,
        "menu": menu_text(menu),
    }
    messages = build_messages("shape_choice", ambition, "cuda", prompts, values)
    options = [FIRST, *(s.name for s in menu)]
    reply = (model or shared_model()).chat(
        messages, max_tokens=96, temperature=0.0, seed=seed, json_schema=shape_schema(options)
    )
    shape, why, valid = parse_choice(reply.text, options)
    return ShapeChoice(
        shape, why, valid, reply.prompt_tokens, reply.completion_tokens, reply.seconds, messages
    )


def parse_choice(text: str, options: list[str]) -> tuple[str, str, bool]:
    """(shape, why, valid): a reply that is not the schema's JSON or names no option keeps FIRST."""
    try:
        data = json.loads(text)
        shape = str(data.get("shape", ""))
        why = " ".join(str(data.get("why", "")).split())[:WHY]
    except (ValueError, TypeError, AttributeError):
        return FIRST, text.strip()[:WHY], False
    return (shape, why, True) if shape in options else (FIRST, why, False)
