"""Triage: classify the round's best failure and hand the generator one focused instruction.

Rules cover what rules can read off the evaluator's verdict (no code, static rejects, compile errors,
timeouts, illegal accesses, undefined names, shape mismatches, correct-but-slow); the model, JSON-
constrained, diagnoses wrong outputs. The generator then sees only the last candidate, the real error
(short) and this instruction: DESIGN.md's findings on why naive "fix it" refinement fails.

The error patterns are the retrieval corpus's error notes (their `rules`, see retrieval_corpus.error_notes);
each category's instruction is the prompt fragment ``nodes/prompts/common/triage/<category>.md``.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import Any, Literal

from langgraph.runtime import Runtime
from langgraph.types import Send

from evaluator.verdict import STAGE
from nodes.context import Context, settings
from nodes.generation import fan_out
from nodes.model.llm import Completion, shared_model
from nodes.prompt_files import build_messages, fragment
from nodes.region_triage import region_routes
from nodes.select import best_of, rank
from nodes.state import State, event
from retrieval_corpus.error_notes import classify, match_error_notes, note_for

ERROR_CHARS = 700
NOTE_CHARS = 600
_ERROR_LINE = re.compile(
    r"(\berror\b|Error:|Exception:|illegal memory|out of bounds|misaligned|Traceback|"
    r"not defined|undefined|mismatch|cannot|expected)",
    re.IGNORECASE,
)
_WARNING = re.compile(r"\b(warning|note)\b", re.IGNORECASE)
_PATH = re.compile(r"(?<![\w.])/(?:[^\s:'\"()]+/)+")  # a build directory in front of a file name
_QUOTED_SOURCE = re.compile(r"^\s*\d+\s+\|\s")  # gcc's "   19 |     code" line under an error
_NVCC_ERROR = re.compile(r"\.cu\(\d+\): error")  # nvcc quotes the source line under it, unnumbered
_BUILD_ECHO = re.compile(r"^(RuntimeError: Error building extension '[^']*').*")  # then the whole command
_COMPILER_ERROR = re.compile(r"\berror\b")  # the compiler's own lines; "RuntimeError" is torch's summary

# Field order is the model's reasoning order (llama.cpp's grammar keeps it): the reference's math for one
# element, the kernel's, then the one line that fixes the difference.
TRIAGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"reference_math": {"type": "string"}, "kernel_math": {"type": "string"},
                   "wrong_line": {"type": "string"}, "fixed_line": {"type": "string"}},
    "required": ["reference_math", "kernel_math", "wrong_line", "fixed_line"],
}

def real_error(verdict: dict[str, Any]) -> str:
    """The log lines that carry the failure, with the source line a compiler quotes, then the evidence.

    Warnings, notes and build chatter are dropped and build paths cut to the file name.
    """
    lines = [_BUILD_ECHO.sub(r"\1", _PATH.sub("", line.rstrip()))
             for line in str(verdict.get("log_tail") or "").splitlines() if line.strip()]
    picked: list[str] = []
    for i, line in enumerate(lines):
        if _ERROR_LINE.search(line) and not _WARNING.search(line):
            picked.append(line.strip())
            after = lines[i + 1] if i + 1 < len(lines) else ""
            if _QUOTED_SOURCE.match(after) or (
                _NVCC_ERROR.search(line) and not _ERROR_LINE.search(after) and after.strip() != "^"
            ):
                picked.append(after.strip())
    text = "\n".join(dict.fromkeys(picked or [line.strip() for line in lines[-5:]]))
    evidence = evidence_text(verdict.get("evidence") or {})
    return "\n".join(part for part in (text[:ERROR_CHARS], evidence) if part)


def evidence_text(evidence: dict[str, Any]) -> str:
    """What the evaluator measured about a wrong output, in one or two plain sentences."""
    parts = []
    m = evidence.get("mismatch") or {}
    if m.get("reason") in ("values", "nan_inf"):
        first = m.get("first_mismatch") or {}
        size = "NaN/inf" if m["reason"] == "nan_inf" else f"max abs error {_num(m.get('max_abs_err'))}"
        parts.append(f"{m.get('mismatches')} of {m.get('numel')} output values are wrong ({size}); first at "
                     f"index {m.get('first_mismatch_index')}: expected {_num(first.get('expected'))}, "
                     f"got {_num(first.get('got'))}.")
    elif m.get("reason") == "shape":
        parts.append(f"output {m.get('output')} has shape {m.get('got')}, expected {m.get('expected')}.")
    elif m.get("reason"):
        parts.append(f"output mismatch ({m['reason']}): expected {m.get('expected')}, got {m.get('got')}.")
    if evidence.get("strict_failures"):
        parts.append(f"strict checks failed: {', '.join(map(str, evidence['strict_failures']))}.")
    return " ".join(parts)


def _num(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, int | float) else str(value)


def rule_feedback(verdict: dict[str, Any], code: str = "") -> dict[str, str] | None:
    """A category and instruction when a rule applies; None for wrong outputs no rule explains.

    ``code`` (the candidate) lets a rule be specific, e.g. name the extension module to call through.
    """
    kind = str(verdict.get("verdict"))
    error = real_error(verdict)
    if (unbound := _extension_function_called_bare(error, code)) is not None:
        return unbound
    if kind == "no_code":
        return _ruled("no_code")
    if kind == "static_reject":
        findings = "; ".join(str(f.get("message") or f.get("code")) if isinstance(f, dict) else str(f)
                             for f in verdict.get("static_findings") or []) or error
        return _ruled("static_reject", findings=findings[:300])
    if kind == "timeout":
        return _ruled("timeout")
    if kind == "correct":
        return _ruled("slow", speedup=str(verdict.get("speedup_eager")))
    if (hit := classify(error)) is not None:
        rule, match = hit
        return _ruled(rule.category, name=next((g for g in match.groups() if g), ""))
    if kind == "compile_error":
        lines = error.splitlines() or ["see the log"]
        at = next((i for i, line in enumerate(lines) if _COMPILER_ERROR.search(line)), 0)
        first = lines[at]
        if at + 1 < len(lines) and not _ERROR_LINE.search(lines[at + 1]):  # the source line it quotes
            first += f" at: {lines[at + 1]}"
        return _ruled("compile_error", error=first[:300])
    if kind == "runtime_error":
        last = error.splitlines()[-1] if error else "see the log"
        return _ruled("runtime_error", error=last[:300])
    return None


def _ruled(category: str, **values: str) -> dict[str, str]:
    """The category with its instruction, the prompt fragment ``triage/<category>`` filled with `values`."""
    return {"category": category, "instruction": fragment(f"triage/{category}", values)}


def _extension_function_called_bare(error: str, code: str) -> dict[str, str] | None:
    """NameError on a function the candidate compiled: it must be called through load_inline's module."""
    name = re.search(r"name '(\w+)' is not defined", error)
    module = re.search(r"^\s*(\w+)\s*=\s*load_inline\(", code, re.MULTILINE)
    if not name or not module or not re.search(rf"[\"']{name.group(1)}[\"']", code):
        return None
    return _ruled("unbound_extension_function", name=name.group(1), module=module.group(1))


def error_note(category: str, error: str) -> str:
    """The corpus's note on this error: one whose patterns match the real error, else the category's."""
    matched = match_error_notes(error, limit=1)
    note = matched[0] if matched else note_for(category)
    return note.body.strip()[:NOTE_CHARS] if note else ""


def triage(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Feedback for the next whole program, the agent's route (retry or replan) and the round counter."""
    return _triaged(state, settings(runtime), _program_feedback)


def triage_regions(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Region mode: each region's route comes off its own GPU verdict (keep, compile, values, fault, or a
    fast second once all is right) without a model call (nodes.region_triage); a whole program written
    where region mode fell back is triaged as one."""
    return _triaged(state, settings(runtime), _region_feedback)


Feedback = tuple[dict[str, Any], list[dict[str, str]] | None, Completion | None]


def _region_feedback(state: State, ctx: Context, last: dict[str, Any], error: str) -> Feedback:
    if "bodies" not in last:
        return _program_feedback(state, ctx, last, error)
    verdict = last.get("verdict") or {}
    feedback = {"category": str(verdict.get("verdict")), "instruction": fragment("triage/regions"),
                "source": "regions", "regions": region_routes(last)}
    return feedback, None, None


def _program_feedback(state: State, ctx: Context, last: dict[str, Any], error: str) -> Feedback:
    """Naive (the raw log), a rule's instruction, or the model's worked comparison of the wrong line."""
    verdict = last.get("verdict") or {}
    if ctx.feedback == "naive":
        return ({"category": str(verdict.get("verdict")), "instruction": fragment("triage/naive"),
                 "source": "naive"}, None, None)
    if (ruled := rule_feedback(verdict, last.get("code") or "")) is not None:
        return {**ruled, "source": "rules"}, None, None
    values = {"source": state["task"]["source"].strip(), "code": (last.get("code") or "").strip(),
              "error": error}
    messages = build_messages("triage", ctx.lead, ctx.backend, ctx.prompts, values)
    reply = shared_model().chat(messages, max_tokens=max(128, ctx.max_tokens // 4), temperature=0.0,
                                seed=ctx.seed, json_schema=TRIAGE_SCHEMA)
    return {**_parse_reply(reply.text), "category": "wrong_output", "source": "model"}, messages, reply


def _triaged(
    state: State, ctx: Context, feedback_for: Callable[[State, Context, dict[str, Any], str], Feedback]
) -> dict[str, Any]:
    started = time.perf_counter()
    round_ = state.get("round", 0)
    last = best_of([c for c in state.get("candidates") or [] if c["round"] == round_]) or {}
    verdict = last.get("verdict") or {}
    error = real_error(verdict)
    feedback, messages, reply = feedback_for(state, ctx, last, error)
    if ctx.feedback == "focused" and (note := error_note(feedback["category"], error)):
        feedback["note"] = note
    feedback["error"] = error
    route = choose_route(state, ctx)
    trace = event("triage", round_, seconds=time.perf_counter() - started, messages=messages,
                  completion=reply and reply.text, prompt_tokens=reply.prompt_tokens if reply else 0,
                  completion_tokens=reply.completion_tokens if reply else 0,
                  inputs={"candidate": last.get("id"), "verdict": verdict.get("verdict")},
                  outputs={"category": feedback["category"], "instruction": feedback["instruction"],
                           "source": feedback["source"], "route": route,
                           "regions": {k: v["route"] for k, v in (feedback.get("regions") or {}).items()}})
    return {"feedback": feedback, "round": round_ + 1, "route": route,
            "replans": state.get("replans", 0) + (route == "replan"), "events": [trace]}


def _parse_reply(text: str) -> dict[str, str]:
    """One instruction from the model's worked comparison; an unusable reply becomes a generic, honest one."""
    try:
        data = {k: str(v).strip()[:300] for k, v in json.loads(text).items()}
        wrong, fixed, reference = data["wrong_line"], data["fixed_line"], data["reference_math"]
    except (ValueError, KeyError, TypeError, AttributeError):
        return {"diagnosis": "unparseable triage reply",
                "instruction": fragment("triage/wrong_output_unparseable")}
    name = "triage/wrong_output" if fixed and fixed != wrong else "triage/wrong_output_unfixed"
    instruction = fragment(name, {"wrong_line": wrong, "reference_math": reference, "fixed_line": fixed})
    return {"diagnosis": f"reference: {reference}; kernel: {data.get('kernel_math', '')}",
            "instruction": instruction}


def choose_route(state: State, ctx: Context) -> Literal["retry", "replan"]:
    """Re-plan when there is a plan (agent), the round made no progress over the last, and re-plans remain."""
    round_ = state.get("round", 0)
    if not state.get("plan") or round_ == 0 or state.get("replans", 0) >= ctx.replans:
        return "retry"
    candidates = state.get("candidates") or []
    now = best_of([c for c in candidates if c["round"] == round_])
    before = best_of([c for c in candidates if c["round"] == round_ - 1])
    if now is None or before is None:
        return "retry"
    stuck = rank(now) <= rank(before) and STAGE.get(str(now["verdict"].get("verdict")), 0) < STAGE["correct"]
    return "replan" if stuck else "retry"


def after_triage(state: State, runtime: Runtime[Context]) -> list[Send] | Literal["analysis"]:
    """The agent's edge: back to analysis for a new plan, or fan out the next round of samples."""
    return "analysis" if state.get("route") == "replan" else fan_out(state, runtime)
