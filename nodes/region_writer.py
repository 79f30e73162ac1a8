"""Region writing: the model completes one region kernel's body; local checks and repair rounds follow.

The model sees the contract's facts (the PyTorch region, op meanings, tensors, the kernel so far) and
answers with body lines only. Each answer is checked here (lint + NVRTC, and the CPU emulation where the
caller gives the problem shrunk; no GPU). A failed answer gets a repair round that shows the error with its
line and a caret (or the first wrong value), sampled with temperature: greedy repairs repeat their error
(measured). The first sample of a best-of-n is greedy; the others sample cooler than whole programs did
(probe: 4 samples at T = 0.7 scored 8.75/20 per sample against greedy's 14/20).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

from nodes.model.llm import ChatBackend, Completion, shared_model
from nodes.prompt_files import build_messages, fragment
from regions.check import Checked, check, extract_body, same_code
from regions.contract import Contract
from regions.emulate import judged_on_cpu
from regions.model import Region

REPAIR_TEMPERATURE = 0.7
UNCHANGED = "unchanged"  # the lint code of an answer that repeats a body already judged wrong


@dataclass
class RegionAttempt:
    """One sample and its repair rounds: the final body and source, whether the local checks pass."""

    body: str
    source: str
    ok: bool
    errors: str
    rounds: int  # answers asked for: 1 + repair rounds
    completion_tokens: int = 0
    prompt_tokens: int = 0
    seconds: float = 0.0
    history: list[dict[str, Any]] = field(default_factory=list)  # each answer: text, ok, errors
    messages: list[list[dict[str, str]]] = field(default_factory=list)  # each answer's prompt, for traces

    def to_dict(self) -> dict[str, Any]:
        """The attempt without its prompts (a results file keeps what was answered, not the facts again)."""
        data = asdict(self)
        data.pop("messages")
        return data


def opening_messages(
    contract: Contract,
    *,
    ambition: str = "moderate",
    prompts: dict[str, str] | None = None,
    previous: tuple[str, str] | None = None,
    optimise: tuple[str, str] | None = None,
    context: str = "",
) -> list[dict[str, str]]:
    """The first prompt for a region: write its body; repair `previous` (an earlier body, what the GPU host
    said of it); or make `optimise` (a body the GPU host found strictly correct, its measured time) faster
    under the same contract ("fast second"). `context` goes under the facts."""
    if optimise is not None:
        values = {"facts": contract.facts, "context": context, "body": optimise[0], "timing": optimise[1]}
        return build_messages("region_optimise", ambition, "cuda", prompts, values)
    if previous is None:
        values = {"facts": contract.facts, "context": context}
        return build_messages("region", ambition, "cuda", prompts, values)
    return repair_messages(
        contract, previous[0] or "(nothing)", previous[1], ambition=ambition, prompts=prompts, context=context
    )


def repair_messages(
    contract: Contract,
    body: str,
    errors: str,
    *,
    ambition: str = "moderate",
    prompts: dict[str, str] | None = None,
    context: str = "",
) -> list[dict[str, str]]:
    """A repair prompt: the body so far and what was wrong with it (a local check's or the GPU's words)."""
    values = {"facts": contract.facts, "context": context, "body": body, "errors": errors}
    return build_messages("region_repair", ambition, "cuda", prompts, values)


def refuse_unchanged(result: Checked, judged: list[tuple[str, str]]) -> Checked:
    """An answer that repeats a body already judged wrong (`judged`: each body and what was said of it),
    comments and whitespace aside, fails here: it is never judged again. Measured: 13 of 24 third-round
    candidates of a refinement run were byte-identical to the second round's."""
    for body, said in judged:
        if body.strip() and same_code(result.body, body):
            message = "this is the body judged wrong before, unchanged apart from comments and spacing"
            finding = {"code": UNCHANGED, "message": message, "line": None, "said": said}
            return replace(
                result, ok=False, lint=[*result.lint, finding], errors=f"- {message}; it failed:\n{said}"
            )
    return result


def unchanged_said(attempt: RegionAttempt) -> str | None:
    """What was said of the body the attempt's last answer repeated (see refuse_unchanged); None if it
    repeated nothing."""
    last = attempt.history[-1] if attempt.history else {}
    return next((f["said"] for f in last.get("lint") or [] if f.get("code") == UNCHANGED), None)


def next_messages(
    contract: Contract,
    attempt: RegionAttempt,
    *,
    ambition: str = "moderate",
    prompts: dict[str, str] | None = None,
    context: str = "",
    fresh: bool = False,
) -> list[dict[str, str]]:
    """The prompt after a failed answer: a repair that shows the body and its errors; after an answer that
    repeated a body judged wrong, the opening prompt again without that body (the model copies what it is
    shown), told only what was wrong with it. `fresh` (the last repair, after a repair failed): the opening
    prompt alone, sampled anew: a repair shown its own broken lines rewrites them, rarely anything else."""
    said = unchanged_said(attempt)
    if said is not None:
        note = fragment("region/unchanged", {"said": said})
        return opening_messages(
            contract, ambition=ambition, prompts=prompts, context=f"{context}\n\n{note}".strip()
        )
    if fresh:
        return opening_messages(contract, ambition=ambition, prompts=prompts, context=context)
    return repair_messages(
        contract,
        attempt.body or "(nothing)",
        attempt.errors,
        ambition=ambition,
        prompts=prompts,
        context=context,
    )


def answer(
    model: ChatBackend,
    messages: list[dict[str, str]],
    *,
    temperature: float,
    seed: int | None,
    round_: int,
    repairing: bool,
    max_tokens: int = 768,
) -> Completion:
    """One answer of a writing round: repairs sample at REPAIR_TEMPERATURE at least (greedy repairs repeat
    their error); each round has its own seed."""
    return model.chat(
        messages,
        max_tokens=max_tokens,
        temperature=max(temperature, REPAIR_TEMPERATURE) if repairing else temperature,
        seed=None if seed is None else seed + 1000 * round_,
    )


def write_region(
    contract: Contract,
    *,
    model: ChatBackend | None = None,
    temperature: float = 0.0,
    seed: int | None = None,
    repairs: int = 2,
    max_tokens: int = 768,
    ambition: str = "moderate",
    prompts: dict[str, str] | None = None,
    previous: tuple[str, str] | None = None,
    optimise: tuple[str, str] | None = None,
    context: str = "",
    twin: tuple[Region, Contract] | None = None,
) -> RegionAttempt:
    """Ask for a body, check it locally, repair up to `repairs` times; the last answer is the result.
    With `twin` (regions.emulate.small_twin), the local checks include the CPU emulation on it.

    The same steps the graph's region writer draws as nodes (write, check, repair), in one loop for callers
    outside a graph (the region benchmark)."""
    model = model or shared_model()
    messages = opening_messages(
        contract, ambition=ambition, prompts=prompts, previous=previous, optimise=optimise, context=context
    )
    attempt = RegionAttempt(body="", source="", ok=False, errors="", rounds=0)
    for round_ in range(repairs + 1):
        repairing = round_ > 0 or previous is not None or optimise is not None
        reply = answer(
            model,
            messages,
            temperature=temperature,
            seed=seed,
            round_=round_,
            repairing=repairing,
            max_tokens=max_tokens,
        )
        result = check(contract, extract_body(reply.text, contract))
        result = refuse_unchanged(result, judged_before(attempt, previous))
        record(attempt, reply, judged_on_cpu(result, twin))
        attempt.messages.append(messages)
        if attempt.ok:
            break
        messages = next_messages(contract, attempt, ambition=ambition, prompts=prompts, context=context)
    return attempt


def judged_before(attempt: RegionAttempt, previous: tuple[str, str] | None) -> list[tuple[str, str]]:
    """The bodies a new answer must not repeat: the one the GPU judged wrong (`previous`) and the attempt's
    own last failed answer."""
    judged = [previous] if previous is not None else []
    if attempt.rounds and not attempt.ok:
        judged.append((attempt.body, unchanged_said(attempt) or attempt.errors))
    return judged


def record(attempt: RegionAttempt, reply: Completion, result: Checked) -> None:
    """One answer and its local check, added to the attempt (the last answer is the attempt's result)."""
    attempt.rounds += 1
    attempt.body, attempt.source, attempt.ok, attempt.errors = (
        result.body,
        result.source,
        result.ok,
        result.errors,
    )
    attempt.prompt_tokens += reply.prompt_tokens
    attempt.completion_tokens += reply.completion_tokens
    attempt.seconds += reply.seconds
    attempt.history.append(
        {"answer": reply.text, "ok": result.ok, "errors": result.errors, "lint": result.lint}
    )
