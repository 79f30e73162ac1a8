"""The LangChain tools: typed argument schemas, and calls that reach the swappable implementation."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from tools import TOOLS, evaluate_candidates, evaluate_kernel, profile_reference_tool, search_examples_tool
from tools.evaluator import EVALUATOR
from tools.profiler import PROFILER
from tools.retriever import RETRIEVER

PROBLEM = {"name": "Relu", "level": 1, "problem_id": 19, "source": "class Model: ..."}


def test_every_tool_has_a_typed_schema_and_a_description() -> None:
    for t in TOOLS:
        schema = t.get_input_schema().model_json_schema()
        assert schema["properties"] and t.description, t.name
    props = evaluate_kernel.get_input_schema().model_json_schema()
    assert props["properties"]["candidate"]["type"] == "string"
    search_props = search_examples_tool.get_input_schema().model_json_schema()["properties"]
    assert search_props["k"]["maximum"] == 10


def test_evaluate_candidates_passes_job_dicts_and_returns_verdicts() -> None:
    seen: list[list[dict[str, Any]]] = []

    def judge(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        seen.append(jobs)
        return [{"job_id": j["job_id"], "verdict": "correct"} for j in jobs]

    jobs = [
        {
            "job_id": "a",
            "problem": PROBLEM,
            "candidate": "```python\nclass ModelNew: ...\n```",
            "config": {"backend": "cpu"},
        }
    ]
    with EVALUATOR.use(judge):
        assert evaluate_candidates.invoke({"jobs": jobs}) == [{"job_id": "a", "verdict": "correct"}]
        assert (
            evaluate_kernel.invoke({"problem": PROBLEM, "candidate": "x", "backend": "cpu"})["verdict"]
            == "correct"
        )
    assert seen[0][0] == jobs[0] and isinstance(seen[0][0]["problem"], dict)
    assert seen[1][0]["config"] == {"backend": "cpu"}


def test_bad_arguments_are_refused_before_any_evaluation() -> None:
    with EVALUATOR.use(lambda jobs: pytest.fail("must not run")), pytest.raises(ValidationError):
        evaluate_candidates.invoke({"jobs": [{"job_id": "a", "candidate": "x"}]})
    with RETRIEVER.use(lambda q, k, c: pytest.fail("must not run")), pytest.raises(ValidationError):
        search_examples_tool.invoke({"query": "softmax", "category": "not-a-category"})


def test_profiler_and_retriever_tools_reach_their_implementations() -> None:
    with PROFILER.use(lambda problem, backend: {"text": f"{problem['name']} on {backend}"}):
        assert profile_reference_tool.invoke({"problem": PROBLEM, "backend": "cpu"}) == {
            "text": "Relu on cpu"
        }
    with RETRIEVER.use(lambda q, k, c: [{"id": q, "k": k, "category": c}]):
        assert search_examples_tool.invoke({"query": "softmax", "k": 2, "category": "softmax"}) == [
            {"id": "softmax", "k": 2, "category": "softmax"}
        ]
