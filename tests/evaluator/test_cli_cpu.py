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


def test_a_broken_problem_is_one_line_and_a_directory_scan_skips_it(tmp_path: Path) -> None:
    (tmp_path / "level1").mkdir()
    broken = tmp_path / "level1" / "3_Broken.py"
    broken.write_text("def broken(:\n")
    checked = _cli("check", str(broken), str(broken), "--backend", "cpu")
    assert checked.returncode == 1 and "Traceback" not in checked.stderr
    why = f"{broken}: not valid Python (invalid syntax, line 1)"
    assert checked.stderr.strip() == f"python -m evaluator: {why}"
    profiled = _cli("profile", str(tmp_path), "--backend", "cpu", "--out", str(tmp_path / "profiles"))
    assert profiled.returncode == 0 and "Traceback" not in profiled.stderr
    assert f"skipped: {broken}: not valid Python" in profiled.stderr
    missing = _cli("baseline", str(tmp_path / "nowhere"), "--out", str(tmp_path / "b.json"))
    assert missing.returncode == 1
    nowhere = tmp_path / "nowhere"
    assert missing.stderr.strip() == f"python -m evaluator: {nowhere}: neither a problem file nor a directory"


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


def _workers_of(parent_pid: int, mode: str | None = None) -> list[tuple[int, Path]]:
    """(pid, scratch) of every live worker (of `mode`, or of any phase) whose spec names this parent."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if _state(int(proc.name)) in (None, "Z"):
                continue
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            if b"evaluator.worker" not in argv:
                continue
            spec = json.loads(Path(argv[argv.index(b"evaluator.worker") + 1].decode()).read_text())
        except (OSError, ValueError, IndexError):
            continue
        if spec.get("parent_pid") == parent_pid and mode in (None, spec.get("mode")):
            found.append((int(proc.name), Path(spec["scratch"])))
    return found


def _state(pid: int) -> str | None:
    """The process's state letter; None when it is gone."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def _is_live_worker(pid: int) -> bool:
    """Still running as a worker (the scratch holding its spec may be gone; a reused pid is not one)."""
    try:
        argv = (Path("/proc") / str(pid) / "cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"evaluator.worker" in argv and _state(pid) not in (None, "Z")


def _all_gone(parent_pid: int, pids: set[int], within_s: float) -> list[int]:
    """Poll until none of `pids` and no worker of `parent_pid` is alive (a zombie has exited);
    returns what is still alive at the deadline."""
    deadline = time.monotonic() + within_s
    while True:
        alive = {p for p in pids if _is_live_worker(p)} | {p for p, _ in _workers_of(parent_pid)}
        if not alive or time.monotonic() > deadline:
            return sorted(alive)
        time.sleep(0.2)


def _job_ids(out: Path) -> list[str]:
    return [json.loads(line)["job_id"] for line in out.read_text().splitlines()] if out.exists() else []


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_a_stopped_run_leaves_no_worker_behind(
    tmp_path: Path, cpu_config: EvalConfig, relu_problem: Problem, sig: signal.Signals
) -> None:
    """A batch cut off at its time limit must not leave a hung candidate holding the GPU lock, and a
    resumed batch loses and repeats nothing, whenever the stop lands.

    SIGINT is the time limit's polite stop (the CLI kills its workers and writes nothing more);
    SIGKILL gives the CLI no chance, so the worker must die with its parent on its own. The test aims the
    stop at the hung candidate's run but asserts nothing about when it landed: on a busy machine the
    hang may already have timed out (a verdict) or the batch may have ended.
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
    command = [sys.executable, "-m", "evaluator", "run", str(jobs), "--out", str(out)]
    command += ["--config", json.dumps(config)]
    cli = subprocess.Popen(command, cwd=REPO, stderr=subprocess.PIPE, text=True)
    seen: set[int] = set()
    try:
        deadline = time.monotonic() + 400  # the extension may still need its one build
        running = False
        while not running and cli.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
            workers = _workers_of(cli.pid)
            seen |= {pid for pid, _ in workers}
            running = any((scratch / "device_acquired").exists() for _, scratch in workers)
        time.sleep(1.0)  # aimed inside the candidate's spin (holding the GIL); where it lands is not checked
        cli.send_signal(sig)  # a no-op when the batch has already ended
        _, stderr = cli.communicate(timeout=120)
    finally:
        cli.kill()
    left = _all_gone(cli.pid, seen, within_s=60)
    assert not left, f"workers {left} outlived the evaluator stopped by {sig.name}"

    ids = _job_ids(out)
    assert len(ids) == len(set(ids)) and set(ids) <= {"nocode", "hang"}, ids  # no verdict written twice
    if cli.returncode == 130:  # SIGINT stopped the batch: it says how many verdicts it wrote
        assert sig == signal.SIGINT and f"interrupted after {len(ids)} verdicts" in stderr, stderr[-3000:]
    elif cli.returncode != -sig:  # not stopped at all: the batch ended before the signal
        assert cli.returncode == 0 and sorted(ids) == ["hang", "nocode"], stderr[-3000:]

    # A resumed batch runs exactly the jobs without a verdict, once each, and keeps the others.
    resumed = _cli("run", str(jobs), "--out", str(out), "--config", json.dumps(config))
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"2 jobs, {len(ids)} already done, {2 - len(ids)} to run" in resumed.stderr, resumed.stderr
    after = _job_ids(out)
    assert after[: len(ids)] == ids and sorted(after) == ["hang", "nocode"], after
