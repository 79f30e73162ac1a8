"""The CLI as a GPU host would run it, here on the `cpu` backend: resumable job files, bad lines skipped."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import cpu_cases as cases
import pytest

from evaluator.config import EvalConfig
from evaluator.problem import Problem

REPO = Path(__file__).resolve().parents[2]


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "evaluator", *args], cwd=REPO, capture_output=True, text=True, timeout=600
    )


@pytest.mark.slow
def test_run_is_resumable_and_skips_bad_lines(
    tmp_path: Path, cpu_config: EvalConfig, relu_problem: Problem
) -> None:
    problem = {"name": relu_problem.name, "level": None, "problem_id": None, "source": relu_problem.source}
    lines = [
        json.dumps({"job_id": "ok", "problem": problem, "candidate": cases.CORRECT}),
        "{not json",
        json.dumps(
            {"job_id": "nocode", "problem": problem, "candidate": cases.NO_CODE, "config": {"timing": False}}
        ),
        json.dumps({"job_id": "typo", "problem": problem, "candidate": "x", "config": {"trails": 3}}),
        json.dumps({"job_id": "noproblem", "candidate": "x"}),
    ]
    jobs = tmp_path / "jobs.jsonl"
    jobs.write_text("\n".join(lines) + "\n")
    out = tmp_path / "results.jsonl"
    config = json.dumps(
        {
            k: v
            for k, v in cpu_config.to_dict().items()
            if k in ("backend", "cache_dir", "timing_trials", "warmup", "reference_compile", "run_timeout_s")
        }
    )
    first = _cli("run", str(jobs), "--out", str(out), "--config", config)
    assert first.returncode == 0, first.stderr
    assert "line 2" in first.stderr and "line 4" in first.stderr and "line 5" in first.stderr
    results = {r["job_id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert results["ok"]["verdict"] == "correct" and results["nocode"]["verdict"] == "no_code"
    assert "2/2" in first.stderr  # the progress bar
    second = _cli("run", str(jobs), "--out", str(out), "--config", config)
    assert "2 already done, 0 to run" in second.stderr
    assert len(out.read_text().splitlines()) == 2


def test_check_and_profile_commands(tmp_path: Path, cpu_config: EvalConfig) -> None:
    problem = Path(__file__).parent / "problems" / "relu.py"
    candidate = tmp_path / "cand.txt"
    candidate.write_text(cases.NO_CODE)
    check = _cli(
        "check", str(problem), str(candidate), "--backend", "cpu", "--cache-dir", cpu_config.cache_dir
    )
    assert check.returncode == 1 and json.loads(check.stdout)["verdict"] == "no_code"
    prof = _cli("profile", str(problem), "--backend", "cpu", "--cache-dir", cpu_config.cache_dir)
    assert prof.returncode == 0, prof.stderr
    assert "aten::relu" in prof.stdout and "100.0%" in prof.stdout
