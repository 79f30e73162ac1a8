"""Generation: n samples of a candidate kernel, fanned out with Send and merged into ``pending``.

Every sample of a round gets the byte-identical prompt (only the seed differs), and the prompt puts what
changes least first (system text, then the problem, then plan/profile/examples, then feedback), so llama.cpp
reuses its KV cache across the samples and, for the prefix, across rounds.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import Send

from evaluator.extract import extract_candidate
from nodes.context import Context, settings
from nodes.model.llm import shared_model
from nodes.prompt_files import build_messages, fragment, load_template, render
from nodes.select import best_of
from nodes.state import SampleInput, State, event

SOLUTION_CHARS = 3000  # one retrieved solution shown in a prompt, at most
OMITTED = fragment("generate/omitted")
EXAMPLES_DONE = fragment("generate/examples_done")
NAIVE_HISTORY_CHARS = 24_000  # about 7k tokens of replayed conversation, so a 16k context never overflows


def fan_out(state: State, runtime: Runtime[Context]) -> list[Send]:
    """One Send per sample; each branch sees the same round inputs and its own sample index."""
    ctx = settings(runtime)
    round_ = state.get("round", 0)
    history = _history(state)
    payload: dict[str, Any] = {
        "task": state["task"],
        "profile": state.get("profile"),
        "plan": state.get("plan"),
        "examples": state.get("examples") or [],
        "round": round_,
        "feedback": state.get("feedback"),
        "last": history[-1] if history else None,
        "history": history if ctx.feedback == "naive" else [],
    }
    cuts = ctx.cuts()
    if len(cuts) > 1 and history and history[-1].get("ambition") in cuts:
        cuts = (history[-1]["ambition"],)  # autotune: later rounds refine the cut that won
    return [
        Send("generate", {**payload, "sample": i, "ambition": cut})
        for i in range(ctx.samples)
        for cut in cuts
    ]


def ambition_of(inp: SampleInput, ctx: Context) -> str:
    """The ambition a branch writes at: its cut under autotune, else the context's."""
    return inp.get("ambition") or ctx.lead


def candidate_id(inp: SampleInput, ctx: Context) -> str:
    """`r<round>s<sample>`, and the cut after it where it is not the lead (autotune writes two a sample)."""
    ambition = ambition_of(inp, ctx)
    cut = f"-{ambition}" if ambition != ctx.lead else ""
    return f"r{inp.get('round', 0)}s{inp['sample']}{cut}"


def _history(state: State) -> list[dict[str, Any]]:
    """The best candidate of each finished round, oldest first (the naive agent's conversation)."""
    by_round: dict[int, list[dict[str, Any]]] = {}
    for candidate in state.get("candidates") or []:
        by_round.setdefault(candidate["round"], []).append(candidate)
    return [best for r in sorted(by_round) if (best := best_of(by_round[r])) is not None]


def generate(inp: SampleInput, runtime: Runtime[Context]) -> dict[str, Any]:
    """Ask the shared model for one whole program; extraction happens here so the state carries the code.

    Region mode's writer sends a task it cannot do here, with the reason in `fallback` (the trace says it)."""
    ctx = settings(runtime)
    round_, sample = inp.get("round", 0), inp["sample"]
    seed = sample_seed(ctx, inp["task"]["name"], round_, sample)
    fallback = inp.get("fallback")
    messages = generation_messages(inp, ctx)
    reply = shared_model().chat(messages, max_tokens=ctx.max_tokens, temperature=ctx.temperature, seed=seed)
    code = extract_candidate(reply.text)
    candidate = {
        "id": candidate_id(inp, ctx),
        "round": round_,
        "sample": sample,
        "ambition": ambition_of(inp, ctx),
        "completion": reply.text,
        "code": code,
        "prompt_tokens": reply.prompt_tokens,
        "completion_tokens": reply.completion_tokens,
        "seconds": round(reply.seconds, 3),
    }
    trace = event(
        "generate",
        round_,
        sample=sample,
        seconds=reply.seconds,
        messages=messages,
        completion=reply.text,
        prompt_tokens=reply.prompt_tokens,
        completion_tokens=reply.completion_tokens,
        inputs={
            "seed": seed,
            "temperature": ctx.temperature,
            "feedback": _brief_feedback(inp),
            **({"fallback": fallback} if fallback else {}),
        },
        outputs={
            "code_lines": code.count("\n") if code else 0,
            "has_code": code is not None,
            "finish_reason": reply.finish_reason,
            "prompt_eval_tokens": reply.prompt_eval_tokens,
        },
    )
    return {"pending": [candidate], "events": [trace]}


def sample_seed(ctx: Context, task_name: str, round_: int, sample: int) -> int:
    """Distinct, reproducible seeds per sample and round (llama.cpp samples identically under one seed)."""
    base = ctx.seed if ctx.seed is not None else sum(task_name.encode()) * 7919
    return (base + 1000 * round_ + sample) % (2**31)


def generation_messages(inp: SampleInput, ctx: Context) -> list[dict[str, str]]:
    """The chat for one sample: the generate prompt, then either focused feedback or the naive history."""
    values = {"source": inp["task"]["source"].strip(), "context": _context_section(inp, ctx), "feedback": ""}
    if ctx.feedback == "focused" and inp.get("feedback") and inp.get("last"):
        values["feedback"] = _feedback_section(inp, ctx)
    messages = build_messages("generate", ambition_of(inp, ctx), ctx.backend, ctx.prompts, values)
    if ctx.feedback == "naive":
        messages += _naive_turns(inp.get("history") or [])
    return messages


def _naive_turns(history: list[dict[str, Any]]) -> list[dict[str, str]]:
    """The conversation so far; the newest rounds that fit NAIVE_HISTORY_CHARS (the context is finite)."""
    turns: list[dict[str, str]] = []
    budget = NAIVE_HISTORY_CHARS
    for past in reversed(history):
        verdict = past.get("verdict") or {}
        reply = fragment(
            "generate/naive_reply",
            {"verdict": str(verdict.get("verdict")), "log": str(verdict.get("log_tail", ""))},
        )
        budget -= len(past["completion"]) + len(reply)
        if budget < 0 and turns:
            break
        turns[:0] = [{"role": "assistant", "content": past["completion"]}, {"role": "user", "content": reply}]
    return turns


def _feedback_section(inp: SampleInput, ctx: Context) -> str:
    """The focused feedback: the last candidate's code, the real error, one instruction (feedback.md)."""
    last, feedback = inp["last"] or {}, inp["feedback"] or {}
    template = load_template("feedback", ambition_of(inp, ctx), ctx.backend, ctx.prompts)
    values = {
        "code": (last.get("code") or last.get("completion") or "").strip(),
        "verdict": str((last.get("verdict") or {}).get("verdict")),
        "error": feedback.get("error", ""),
        "instruction": feedback.get("instruction", ""),
        "note": feedback.get("note", ""),
    }
    return "\n\n".join(m["content"] for m in render(template, values))


def _context_section(inp: SampleInput, ctx: Context) -> str:
    """Profile, plan and retrieved examples as markdown sections; empty parts leave no heading behind."""
    parts: list[str] = []
    profile = inp.get("profile") or {}
    if profile.get("text"):
        parts.append(fragment("generate/profile", {"profile": profile["text"].strip()}))
    plan = inp.get("plan")
    if plan:
        parts.append(fragment("generate/plan", {"plan": _plan_text(plan)}))
    examples = inp.get("examples") or []
    for example in examples:
        parts.append(_example_text(example, ctx))
    if examples:
        # After ~3k tokens of examples the 1.5B model forgets the task and copies the last example.
        parts.append(EXAMPLES_DONE)
    return "\n\n".join(parts)


def _plan_text(plan: dict[str, Any]) -> str:
    lines = [str(plan.get("summary", "")).strip()]
    for op in plan.get("ops") or []:
        values = {key: str(op.get(key, "?")) for key in ("action", "op", "category")}
        lines.append(fragment("generate/plan_op", values))
    return "\n".join(line for line in lines if line)


def _example_text(example: dict[str, Any], ctx: Context) -> str:
    """A retrieved example: its lesson always, its CUDA solution only when the target is CUDA.

    The heading says it solves another problem: the 1.5B model otherwise copies an example's math.
    """
    head = fragment(
        "generate/example",
        {
            "title": str(example.get("title", example.get("id"))),
            "techniques": ", ".join(example.get("techniques") or []),
            "when_to_use": str(example.get("when_to_use", "")),
        },
    )
    if ctx.backend != "cuda" or not example.get("solution"):
        return head
    excerpt = solution_excerpt(str(example["solution"]), SOLUTION_CHARS)
    return f"{head}\n{fragment('generate/example_code', {'solution': excerpt})}"


def solution_excerpt(solution: str, limit: int) -> str:
    """At most ~`limit` characters of a solution: its head and its tail (ModelNew's wiring), cut at lines.

    A solution cut off mid-statement ends the prompt with half a kernel, and the model completes that
    instead of answering; the marker says the middle is left out on purpose.
    """
    solution = solution.strip()
    if len(solution) <= limit:
        return solution
    head = solution[: 2 * limit // 3].rsplit("\n", 1)[0]
    tail = solution[-(limit // 3) :].split("\n", 1)[-1]
    return f"{head}\n{OMITTED}\n{tail}"


def _brief_feedback(inp: SampleInput) -> dict[str, Any] | None:
    feedback = inp.get("feedback")
    if not feedback:
        return None
    return {k: feedback.get(k) for k in ("category", "source", "instruction")}
