"""The one codec for jobs and problems: job lines in, Jobs out, code extracted exactly once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluator.config import EvalConfig
from evaluator.jobs import Job, job_from_line, job_line, parse_jobs
from evaluator.problem import ProblemError, problem_from_dict, problem_from_source, problem_to_dict

SOURCE = (
    "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x\n"
    "def get_inputs():\n    return [torch.randn(4)]\ndef get_init_inputs():\n    return []\n"
)
PROGRAM = "class ModelNew:\n    pass\n"
ANSWER = f"Here you go:\n```python\n{PROGRAM}```\n"
TASK = {"name": "Id", "level": 1, "problem_id": 3, "source": SOURCE, "extra": "not a problem field"}


def test_problem_round_trips_through_its_dict_form() -> None:
    problem = problem_from_dict(TASK)
    assert (problem.name, problem.level, problem.problem_id) == ("Id", 1, 3)
    assert problem_to_dict(problem) == {k: TASK[k] for k in ("name", "level", "problem_id", "source")}
    assert problem_to_dict(TASK) == problem_to_dict(problem)
    assert problem_from_dict(problem_to_dict(problem)).key == problem.key
    with pytest.raises(ProblemError, match="source"):
        problem_from_dict({"name": "x"})


def test_a_raw_answer_is_extracted_when_the_job_is_made() -> None:
    job = job_from_line(job_line("j", TASK, ANSWER), EvalConfig())
    assert job.code == PROGRAM and job.candidate_text == ANSWER
    assert Job("k", problem_from_source(SOURCE), "no code here").code is None


def test_code_the_generator_extracted_is_taken_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    import evaluator.jobs as jobs

    def refuse(_: str) -> None:
        raise AssertionError("extracted a second time")

    monkeypatch.setattr(jobs, "extract_candidate", refuse)
    line = job_line("j", TASK, ANSWER, {"backend": "cpu"}, code=PROGRAM, extracted=True)
    job = job_from_line(json.loads(json.dumps(line)), EvalConfig())
    assert job.code == PROGRAM and job.config.backend == "cpu"
    none_found = job_from_line(job_line("n", TASK, "prose", code=None, extracted=True), EvalConfig())
    assert none_found.code is None


def test_job_files_report_bad_lines_and_keep_the_good(tmp_path: Path) -> None:
    good = job_line("a", TASK, ANSWER)
    lines = [
        json.dumps(good),
        json.dumps(good),  # duplicate id
        json.dumps(job_line("b", TASK, ANSWER) | {"code": 7}),
        json.dumps({"job_id": "c", "problem": {"source": "def (:"}, "candidate": ANSWER}),
        "{not json",
        json.dumps(job_line("d", TASK, ANSWER, {"atol": 0.5})),
    ]
    path = tmp_path / "jobs.jsonl"
    path.write_text("\n".join(lines) + "\n")
    jobs, errors = parse_jobs(path, EvalConfig())
    assert [j.job_id for j in jobs] == ["a", "d"] and jobs[1].config.atol == 0.5
    assert [e.split(":")[0] for e in errors] == ["line 2", "line 3", "line 4", "line 5"]
    assert "duplicate job_id" in errors[0] and "code must be" in errors[1]


def test_a_region_candidate_keeps_its_regions_through_the_codec(tmp_path: Path) -> None:
    regions = [{"id": "r1", "module": "_kg_ext_r1", "launch": "region_r1_launch", "spec": {"steps": []}}]
    line = job_line("r", TASK, ANSWER, code=PROGRAM, extracted=True, regions=regions)
    assert json.loads(json.dumps(line))["regions"] == regions
    assert job_from_line(line, EvalConfig()).regions == regions
    assert job_from_line(job_line("p", TASK, ANSWER), EvalConfig()).regions is None
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        json.dumps(job_line("b", TASK, ANSWER) | {"regions": [{"id": "r1"}]})
        + "\n"
        + json.dumps(job_line("c", TASK, ANSWER) | {"regions": []})
        + "\n"
    )
    jobs, errors = parse_jobs(bad, EvalConfig())
    assert jobs == [] and len(errors) == 2
    assert all(
        "regions must be a non-empty list of objects with id, module, launch and spec" in e for e in errors
    )
