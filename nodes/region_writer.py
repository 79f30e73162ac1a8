"""Region writing: the model completes one region kernel's body; local checks and repair rounds follow.

The model sees the contract's facts (the PyTorch region, op meanings, tensors, the kernel so far) and
answers with body lines only. Each answer is checked here (lint + NVRTC, no GPU). A failed answer gets a
repair round that shows the error with its line and a caret, sampled with temperature: greedy repairs
repeat their error (measured). The first sample of a best-of-n is greedy; the others sample cooler than
whole programs did (probe: 4 samples at T = 0.7 scored 8.75/20 per sample against greedy's 14/20).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from nodes.model.llm import ChatBackend, shared_model
from nodes.prompt_files import build_messages
from regions.check import Checked, check, extract_body
from regions.contract import Contract

REPAIR_TEMPERATURE = 0.7


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
) -> RegionAttempt:
    """Ask for a body, check it locally, repair up to `repairs` times; the last answer is the result.

    `previous` is (an earlier body, what the GPU host said of it): the first answer is then already a
    repair of that body, sampled like every repair. `optimise` is (a body the GPU host found strictly
    correct, its measured time): the first answer is a faster rewrite of it under the same contract ("fast
    second"), sampled too. `context` goes under the facts (e.g. the region's share of the reference's
    measured time)."""
    model = model or shared_model()
    if optimise is not None:
        values = {"facts": contract.facts, "context": context, "body": optimise[0], "timing": optimise[1]}
        messages = build_messages("region_optimise", ambition, "cuda", prompts, values)
    elif previous is None:
        messages = build_messages(
            "region", ambition, "cuda", prompts, {"facts": contract.facts, "context": context}
        )
    else:
        values = {
            "facts": contract.facts,
            "context": context,
            "body": previous[0] or "(nothing)",
            "errors": previous[1],
        }
        messages = build_messages("region_repair", ambition, "cuda", prompts, values)
    attempt = RegionAttempt(body="", source="", ok=False, errors="", rounds=0)
    for round_ in range(repairs + 1):
        repairing = round_ > 0 or previous is not None or optimise is not None
        reply = model.chat(
            messages,
            max_tokens=max_tokens,
            temperature=max(temperature, REPAIR_TEMPERATURE) if repairing else temperature,
            seed=None if seed is None else seed + 1000 * round_,
        )
        result = check(contract, extract_body(reply.text, contract))
        _record(attempt, reply.text, result, reply.prompt_tokens, reply.completion_tokens, reply.seconds)
        attempt.messages.append(messages)
        if result.ok:
            break
        values = {
            "facts": contract.facts,
            "context": context,
            "body": result.body or "(nothing)",
            "errors": result.errors,
        }
        messages = build_messages("region_repair", ambition, "cuda", prompts, values)
    return attempt


def _record(
    attempt: RegionAttempt,
    text: str,
    result: Checked,
    prompt_tokens: int,
    completion_tokens: int,
    seconds: float,
) -> None:
    attempt.rounds += 1
    attempt.body, attempt.source, attempt.ok, attempt.errors = (
        result.body,
        result.source,
        result.ok,
        result.errors,
    )
    attempt.prompt_tokens += prompt_tokens
    attempt.completion_tokens += completion_tokens
    attempt.seconds += seconds
    attempt.history.append({"answer": text, "ok": result.ok, "errors": result.errors, "lint": result.lint})
