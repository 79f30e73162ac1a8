"""results.jsonl, trace.jsonl, job files and the per-level table."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from evaluator.verdict import summary
from graph.runner.deferred import job_lines, load_results, resume_map, write_jobs
from graph.runner.jsonl import JsonlLog, read_jsonl
from graph.runner.report import render, summarise
from graph.runner.results import ResultsFile, build_result

TASK = {"name": "Row_Sum", "level": 0, "problem_id": 2, "source": "..."}


def test_torn_last_line_is_cut_before_appending(tmp_path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text('{"a": 1}\n{"a": 2, "b"')  # a kill in the middle of a write
    assert read_jsonl(path) == [{"a": 1}]
    log = JsonlLog(path)
    log.write({"a": 3})
    log.close()
    assert read_jsonl(path) == [{"a": 1}, {"a": 3}]


def test_results_are_written_once_per_task_and_strategy(tmp_path) -> None:
    best = {
        "id": "r0s1",
        "code": "src",
        "verdict": {
            "verdict": "correct",
            "correct_strict": True,
            "correct_kernelbench": True,
            "compiled": True,
            "speedup_eager": 1.5,
            "speedup_compile": 0.9,
            "custom_kernel_share": 0.8,
        },
    }
    values = {
        "best": best,
        "candidates": [
            {"id": "r0s0", "round": 0, "sample": 0, "verdict": {"verdict": "compile_error"}},
            best,
        ],
        "round": 1,
        "events": [
            {"prompt_tokens": 100, "completion_tokens": 50, "seconds": 2.0},
            {"prompt_tokens": 0, "completion_tokens": 0, "seconds": 1.25},
        ],
    }
    results = ResultsFile(tmp_path / "results.jsonl")
    record = build_result(TASK, "zero_shot", values, {"model": {"name": "m"}})
    assert results.add(record) and not results.add(dict(record))
    results.close()
    again = ResultsFile(tmp_path / "results.jsonl")
    assert again.has(TASK, "zero_shot") and not again.has(TASK, "agent")
    line = read_jsonl(tmp_path / "results.jsonl")[0]
    assert line["verdict"] == "correct" and line["speedup_eager"] == 1.5 and line["best_id"] == "r0s1"
    first, second = line["candidates"]
    assert first == {"id": "r0s0", "round": 0, "sample": 0, **summary({"verdict": "compile_error"})}
    assert [c["verdict"] for c in line["candidates"]] == ["compile_error", "correct"]
    assert [c["speedup_eager"] for c in line["candidates"]] == [None, 1.5]
    assert second["correct_kernelbench"] is True and second["custom_kernel_share"] == 0.8
    assert second == {"id": "r0s1", "round": None, "sample": None, **best["verdict"]}
    assert (line["prompt_tokens"], line["completion_tokens"], line["node_seconds"]) == (100, 50, 3.25)
    assert line["model"] == {"name": "m"}


def test_result_without_candidates() -> None:
    record = build_result(TASK, "agent", {"best": None, "candidates": [], "events": []}, {})
    assert record["verdict"] == "no_candidate" and record["correct_strict"] is None


def _interrupt(id_: str, jobs: list[dict]) -> SimpleNamespace:
    return SimpleNamespace(id=id_, value={"kind": "evaluate", "jobs": jobs})


def test_jobs_round_trip_through_a_results_file(tmp_path) -> None:
    jobs = [
        {"job_id": "Row_Sum/r0s0", "problem": {"name": "Row_Sum"}, "candidate": "a", "config": {}},
        {"job_id": "Row_Sum/r0s1", "problem": {"name": "Row_Sum"}, "candidate": "b", "config": {}},
    ]
    paused = [_interrupt("int-1", jobs)]
    lines = job_lines("zero_shot:L0/Row_Sum", paused)
    assert [line["job_id"] for line in lines] == [
        "zero_shot:L0/Row_Sum|Row_Sum/r0s0",
        "zero_shot:L0/Row_Sum|Row_Sum/r0s1",
    ]
    write_jobs(tmp_path / "jobs.jsonl", lines)
    assert read_jsonl(tmp_path / "jobs.jsonl") == lines
    (tmp_path / "out.jsonl").write_text(
        json.dumps({"job_id": lines[0]["job_id"], "verdict": "correct"}) + "\n"
    )
    partial = load_results(tmp_path / "out.jsonl")
    assert resume_map("zero_shot:L0/Row_Sum", paused, partial) is None  # one job still missing: stay paused
    with open(tmp_path / "out.jsonl", "a") as handle:
        handle.write(json.dumps({"job_id": lines[1]["job_id"], "verdict": "compile_error"}) + "\n")
    answers = resume_map("zero_shot:L0/Row_Sum", paused, load_results(tmp_path / "out.jsonl"))
    assert answers == {
        "int-1": [
            {"job_id": "Row_Sum/r0s0", "verdict": "correct"},
            {"job_id": "Row_Sum/r0s1", "verdict": "compile_error"},
        ]
    }


def _row(strategy: str, level: int, correct: bool, speedup: float | None, kb: bool | None = None) -> dict:
    return {
        "strategy": strategy,
        "level": level,
        "correct_strict": correct,
        "compiled": True,
        "correct_kernelbench": correct if kb is None else kb,
        "speedup_eager": speedup,
        "speedup_compile": None if speedup is None else speedup / 2,
    }


def test_summary_per_level() -> None:
    rows = summarise(
        [
            _row("agent", 1, True, 2.0),
            _row("agent", 1, True, 0.5),
            _row("agent", 1, False, None, kb=True),
            _row("agent", 1, False, None),
            _row("zero_shot", 1, False, None),
        ]
    )
    agent, zero = rows
    assert (agent["tasks"], agent["correct_pct"], agent["correct_kernelbench_pct"], agent["fast_1_pct"]) == (
        4,
        50.0,
        75.0,
        25.0,
    )
    assert agent["geomean_speedup_eager"] == pytest.approx(1.0)
    assert agent["geomean_speedup_compile"] == pytest.approx(0.5)
    assert zero["correct_pct"] == 0.0 and zero["geomean_speedup_eager"] is None
    assert render(rows).row_count == 2
