"""Fixtures for graph tests: the scripted model, evaluator, profiler and retriever installed for one test."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from graph_fakes import ScriptedModel, default_reply, judge

from nodes.model.llm import use_model
from tools.evaluator import EVALUATOR
from tools.profiler import PROFILER
from tools.retriever import RETRIEVER


def _examples(query: str, k: int, category: str | None) -> list[dict[str, Any]]:
    return [
        {
            "id": f"ex{i}",
            "title": f"Example {i}",
            "category": category or "any",
            "techniques": ["grid-stride"],
            "when_to_use": "always",
            "solution": "SOLUTION",
            "speedup": 1.0,
        }
        for i in range(k)
    ]


@pytest.fixture
def scripted() -> Iterator[Callable[..., ScriptedModel]]:
    """Install a scripted model, evaluator, profiler and retriever for one test."""
    stack: list[Any] = []

    def install(generate: Callable[[list[dict[str, str]], dict[str, Any]], str]) -> ScriptedModel:
        model = ScriptedModel(default_reply(generate))
        for cm in (
            use_model(model),
            EVALUATOR.use(judge),
            PROFILER.use(lambda problem, backend, store: {"text": f"| relu | 100% | ({backend}, {store})"}),
            RETRIEVER.use(_examples),
        ):
            cm.__enter__()
            stack.append(cm)
        return model

    yield install
    for cm in reversed(stack):
        cm.__exit__(None, None, None)
