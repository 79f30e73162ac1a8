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
    with PROFILER.use(lambda problem, backend, store: {"text": f"{problem['name']} on {backend}"}):
        assert profile_reference_tool.invoke({"problem": PROBLEM, "backend": "cpu"}) == {
            "text": "Relu on cpu"
        }
    with RETRIEVER.use(lambda q, k, c: [{"id": q, "k": k, "category": c}]):
        assert search_examples_tool.invoke({"query": "softmax", "k": 2, "category": "softmax"}) == [
            {"id": "softmax", "k": 2, "category": "softmax"}
        ]


def test_profiler_reads_the_gpu_hosts_store_and_never_measures_here(kernelbench_dir) -> None:
    """A deferred run on a CPU host gets the H200's committed profile; a missing one fails loudly."""
    from pathlib import Path

    from tools.profiler import profile_reference

    store = str(Path(__file__).resolve().parents[2] / "benchmarks" / "profiles")
    source = (kernelbench_dir / "level1" / "1_Square_matrix_multiplication_.py").read_text()
    problem = {"name": "Square_matrix_multiplication_", "level": 1, "problem_id": 1, "source": source}
    found = profile_reference(problem, "cuda", store)
    assert found["device"] == "NVIDIA H200" and found["rows"][0]["op"] == "aten::matmul"
    assert found["cached"] and "aten::matmul" in found["text"]
    with pytest.raises(FileNotFoundError, match="python -m evaluator profile"):
        profile_reference(problem | {"source": source.replace("2048 * 2", "2048 * 3")}, "cuda", store)
