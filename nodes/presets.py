"""Named configurations: the paper's setups (including its failed naive agent) as Context overrides.

Plain data: nodes.context applies them (and its tests check every preset's strategy and values against the
context schema), so this module imports nothing of the project."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Preset:
    """A named Context override set and the strategy it was made for."""

    name: str
    strategy: str  # one of nodes.context.STRATEGIES
    description: str
    values: dict[str, Any] = field(default_factory=dict)


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset(
            "zero-shot",
            "zero_shot",
            "The paper's zero-shot prompting: one greedy sample per task.",
            {"samples": 1, "rounds": 1, "temperature": 0.0, "ambition": "moderate"},
        ),
        Preset(
            "best-of-8",
            "zero_shot",
            "Best-of-n under the execution oracle, n=8, sampled (3% -> 33% in the paper from n=1 to n=8).",
            {"samples": 8, "rounds": 1, "temperature": 0.8},
        ),
        Preset(
            "profiling-guided",
            "profiling_guided",
            "The paper's best method: the reference's op-level profile in the prompt, conservative ambition.",
            {"samples": 1, "rounds": 1, "temperature": 0.0, "ambition": "conservative"},
        ),
        Preset(
            "autotuned",
            "zero_shot",
            "The fastest setup measured: one greedy sample at each of the aggressive and moderate cuts, the "
            "faster strictly correct kept (H100, 2026-12-07: 28/28 strict, 14 at least 1.05x eager).",
            {"samples": 1, "rounds": 1, "temperature": 0.0, "ambition": "autotune"},
        ),
        Preset(
            "naive-agent",
            "agent",
            "The paper's first agent (3% correct): rewrite everything, one greedy "
            "sample, many steps, the raw log and 'fix it', no retrieval.",
            {
                "ambition": "aggressive",
                "samples": 1,
                "rounds": 10,
                "temperature": 0.0,
                "feedback": "naive",
                "retrieval_k": 0,
                "replans": 0,
                "stop_on": "correct",
            },
        ),
        Preset(
            "repaired-agent",
            "agent",
            "The repaired agent: moderate ambition, sampled best-of-4 per round, "
            "focused one-instruction triage on the real error, retrieval, one re-plan.",
            {
                "ambition": "moderate",
                "samples": 4,
                "rounds": 3,
                "temperature": 0.7,
                "feedback": "focused",
                "retrieval_k": 2,
                "replans": 1,
                "stop_on": "faster",
            },
        ),
        Preset(
            "cpu-smoke",
            "zero_shot",
            "The whole loop on the CPU backend with short completions (CI).",
            {
                "backend": "cpu",
                "samples": 1,
                "rounds": 2,
                "max_tokens": 900,
                "temperature": 0.2,
                "ambition": "conservative",
                "retrieval_k": 1,
            },
        ),
    )
}


def preset_values(name: str) -> dict[str, Any]:
    """The Context overrides of a preset; a KeyError names the known presets."""
    try:
        return dict(PRESETS[name].values)
    except KeyError:
        raise KeyError(f"unknown preset {name!r}; known: {', '.join(sorted(PRESETS))}") from None
