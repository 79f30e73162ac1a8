"""The seams the nodes call: the evaluator, the profiler and the retriever, real or swapped by a test."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langgraph.runtime import Runtime

from evaluator.jobs import job_line
from nodes.context import Context
from nodes.evaluation import evaluate
from tools.evaluator import EVALUATOR, run_jobs
from tools.profiler import PROFILER, profile_reference
from tools.retriever import RETRIEVER, search_examples

PROBLEM = {"name": "Relu", "level": 1, "problem_id": 19, "source": "class Model: ..."}
REGION = {"id": "r1", "module": "kernel_r1", "launch": "launch", "spec": {"id": "r1"}}


def test_run_jobs_hands_the_job_lines_over_unchanged_and_skips_an_empty_batch() -> None:
    seen: list[list[dict[str, Any]]] = []

    def judge(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        seen.append(jobs)
        return [{"job_id": j["job_id"], "verdict": "correct"} for j in jobs]

    jobs = [
        job_line("a", PROBLEM, "```python\nclass ModelNew: ...\n```", {"backend": "cpu"}),
        job_line("b", PROBLEM, "text", {"backend": "cuda"}, code="x = 1", extracted=True, regions=[REGION]),
    ]
    with EVALUATOR.use(judge):
        assert run_jobs(jobs) == [
            {"job_id": "a", "verdict": "correct"},
            {"job_id": "b", "verdict": "correct"},
        ]
        assert run_jobs([]) == []
    assert seen == [jobs]  # every key kept (code, regions), nothing added; no call for an empty batch


def test_the_real_evaluator_answers_result_lines_in_job_order() -> None:
    """Code-less candidates stop before any build or worker: real `no_code` verdicts, fast."""
    source = (
        Path(__file__).resolve().parents[2] / "graph" / "demo_tasks" / "2_Row_Sum_Of_Squares.py"
    ).read_text()
    problem = {"name": "Row_Sum_Of_Squares", "level": 0, "problem_id": 2, "source": source}
    jobs = [job_line(i, problem, "I would fuse the ops.", {"backend": "cpu"}) for i in ("x", "y")]
    results = run_jobs(jobs)
    assert [r["job_id"] for r in results] == ["x", "y"]
    assert {r["verdict"] for r in results} == {"no_code"} and not any(r["compiled"] for r in results)


def test_the_evaluate_node_judges_through_the_seam_and_matches_verdicts_to_candidates() -> None:
    def judge(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        # out of order, as a result file may be: the node matches them by job_id
        return [{"job_id": j["job_id"], "verdict": "wrong_output", "code": j["code"]} for j in reversed(jobs)]

    pending = [{"id": f"c{i}", "sample": i, "completion": f"answer {i}", "code": f"code {i}"} for i in (1, 0)]
    state = {"task": PROBLEM, "pending": pending, "round": 0}
    with EVALUATOR.use(judge):
        update = evaluate(state, Runtime(context=Context(backend="cpu", evaluator="local")))
    judged = update["candidates"]
    assert [c["id"] for c in judged] == ["c0", "c1"] and update["pending"] is None
    assert [c["verdict"] for c in judged] == [
        {"verdict": "wrong_output", "code": "code 0"},
        {"verdict": "wrong_output", "code": "code 1"},
    ]  # each candidate's own verdict, its job_id dropped


def test_profile_reference_and_search_examples_reach_the_current_implementations() -> None:
    with PROFILER.use(
        lambda problem, backend, store: {"text": f"{problem['name']} on {backend} from {store}"}
    ):
        assert profile_reference(PROBLEM, "cpu", "profiles") == {"text": "Relu on cpu from profiles"}
    with RETRIEVER.use(lambda q, k, c: [{"id": q, "k": k, "category": c}]):
        assert search_examples("softmax", 2, "softmax") == [{"id": "softmax", "k": 2, "category": "softmax"}]
    with RETRIEVER.use(lambda q, k, c: pytest.fail("k=0 must not search")):
        assert search_examples("softmax", 0) == []


def test_profiler_reads_the_gpu_hosts_store_and_never_measures_here(kernelbench_dir) -> None:
    """A deferred run on a CPU host gets the H200's committed profile; a missing one fails loudly."""
    store = str(Path(__file__).resolve().parents[2] / "benchmarks" / "profiles")
    source = (kernelbench_dir / "level1" / "1_Square_matrix_multiplication_.py").read_text()
    problem = {"name": "Square_matrix_multiplication_", "level": 1, "problem_id": 1, "source": source}
    found = profile_reference(problem, "cuda", store)
    assert found["device"] == "NVIDIA H200" and found["rows"][0]["op"] == "aten::matmul"
    assert found["cached"] and "aten::matmul" in found["text"]
    with pytest.raises(FileNotFoundError, match="python -m evaluator profile"):
        profile_reference(problem | {"source": source.replace("2048 * 2", "2048 * 3")}, "cuda", store)
