"""The CLI as a GPU host would run it, here on the `cpu` backend: resumable job files, bad lines skipped."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
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


def _run_workers_of(parent_pid: int) -> list[tuple[int, Path]]:
    """(pid, scratch) of every `run`-phase worker whose spec names this parent."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            if b"evaluator.worker" not in argv:
                continue
            spec = json.loads(Path(argv[argv.index(b"evaluator.worker") + 1].decode()).read_text())
        except (OSError, ValueError, IndexError):
            continue
        if spec.get("parent_pid") == parent_pid and spec.get("mode") == "run":
            found.append((int(proc.name), Path(spec["scratch"])))
    return found


def _gone(pid: int, within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state == "Z":  # exited, waiting for a reaper
            return True
        time.sleep(0.1)
    return False


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_a_stopped_run_leaves_no_worker_behind(
    tmp_path: Path, cpu_config: EvalConfig, relu_problem: Problem, sig: signal.Signals
) -> None:
    """A batch cut off at its time limit must not leave a hung candidate holding the GPU lock.

    SIGINT is the time limit's polite stop (the CLI kills its workers and writes nothing for them);
    SIGKILL gives the CLI no chance, so the worker must die with its parent on its own.
    """
    problem = {"name": relu_problem.name, "level": None, "problem_id": None, "source": relu_problem.source}
    jobs = tmp_path / "jobs.jsonl"
    jobs.write_text(
        json.dumps({"job_id": "nocode", "problem": problem, "candidate": cases.NO_CODE})
        + "\n"
        + json.dumps({"job_id": "hang", "problem": problem, "candidate": cases.HANG})
        + "\n"
    )
    out = tmp_path / "results.jsonl"
    config = {"backend": "cpu", "cache_dir": cpu_config.cache_dir, "run_timeout_s": 300}
    cli = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "evaluator",
            "run",
            str(jobs),
            "--out",
            str(out),
            "--config",
            json.dumps(config),
        ],
        cwd=REPO,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 400  # the extension may still need its one build
        workers: list[tuple[int, Path]] = []
        while not any((scratch / "device_acquired").exists() for _, scratch in workers):
            assert cli.poll() is None and time.monotonic() < deadline, "the hang never started running"
            time.sleep(0.2)
            workers = _run_workers_of(cli.pid)
        time.sleep(1.0)  # inside the candidate's spin now, holding the GIL
        cli.send_signal(sig)
        _, stderr = cli.communicate(timeout=30)
    finally:
        cli.kill()
    (pid, _), *_ = workers
    assert _gone(pid, within_s=10), f"worker {pid} outlived the evaluator stopped by {sig.name}"
    verdicts = [json.loads(line)["job_id"] for line in out.read_text().splitlines()]
    assert verdicts == ["nocode"]  # the cut-off job has no verdict: a resumed batch runs it again
    if sig == signal.SIGINT:
        assert cli.returncode == 130 and "interrupted after 1 verdicts" in stderr
