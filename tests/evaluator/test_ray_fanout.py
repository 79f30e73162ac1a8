"""`python -m evaluator run JOBS --ray [ADDRESS]` on a real Ray cluster of this machine, the cpu backend and
real worker processes: it says what the local run says, and a killed cluster run resumes without losing or
repeating a verdict.

Every Ray process of a test lives under one short private directory (Ray's sockets, session files and
token, the workers' scratch); whatever still names it when the test ends is killed by pid, pass or fail.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import cpu_cases as cases
import pytest

from evaluator.api import evaluate_many
from evaluator.config import EvalConfig
from evaluator.jobs import job_from_line, job_line
from evaluator.problem import Problem

REPO = Path(__file__).resolve().parents[2]
# The cluster tests need the ray extra (scripts/setup.sh installs it; a GPU host without it skips them).
needs_ray = pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="no ray extra")
FLAGS = ("verdict", "verdict_kernelbench", "correct_strict", "correct_kernelbench", "compiled")
BATCH = {
    "nocode": cases.NO_CODE,
    "ok": cases.CORRECT,
    "wrong": cases.WRONG,
    "cerr": cases.COMPILE_ERROR,
    "torch_ops": cases.TORCH_OPS,
}


@pytest.fixture
def ray_env() -> Iterator[dict[str, str]]:
    """The environment for Ray and the CLI, all pointed at one private directory (short: Ray's socket paths
    must fit in 107 bytes), and the clean-up of every process that names it."""
    root = tempfile.mkdtemp(prefix="kgray", dir="/tmp")
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "RAY_AUTH_MODE")}
    env.update(RAY_TMPDIR=root, TMPDIR=root, HOME=root, RAY_USAGE_STATS_ENABLED="0")
    try:
        yield env
    finally:
        deadline = time.monotonic() + 30
        while (left := _processes_naming(root)) and time.monotonic() < deadline:
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.5)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def ray_cluster(ray_env: dict[str, str]) -> tuple[str, dict[str, str]]:
    """A standing 2-CPU cluster (`ray start --head`), its address, and the environment to reach it.

    Its ports are free ones, so it does not collide with another Ray on this machine. It requires a token,
    as a real one would: generated into the private HOME first, and sent by a driver that connects to an
    explicit address only with RAY_AUTH_MODE=token."""
    ray = str(Path(sys.executable).with_name("ray"))
    token = subprocess.run(
        [ray, "get-auth-token", "--generate"], env=ray_env, capture_output=True, timeout=60
    )
    assert token.returncode == 0, token.stderr[-3000:]
    ports = _free_ports(3)
    command = [ray, "start", "--head", "--num-cpus=2"]
    command += [f"--port={ports[0]}", f"--ray-client-server-port={ports[1]}"]
    command += [f"--dashboard-agent-listen-port={ports[2]}", "--include-dashboard=false"]
    command += ["--disable-usage-stats"]
    started = subprocess.run(command, env=ray_env, capture_output=True, text=True, timeout=180)
    assert started.returncode == 0, started.stderr[-3000:]
    return f"127.0.0.1:{ports[0]}", {**ray_env, "RAY_AUTH_MODE": "token"}


def _free_ports(n: int) -> list[int]:
    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def _processes_naming(root: str) -> list[int]:
    """Live processes (zombies have exited) that name `root` in their command line, environment or open
    files: Ray's daemons and workers inherit RAY_TMPDIR and log into its session directory (an agent that
    rewrites its process title loses the first two), and an evaluator worker's spec lies under TMPDIR."""
    found = []
    mark = root.encode()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            named = mark in (proc / "cmdline").read_bytes() or mark in (proc / "environ").read_bytes()
            named = named or any(root in _target(fd) for fd in (proc / "fd").iterdir())
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if named and state != "Z":
            found.append(int(proc.name))
    return found


def _target(link: Path) -> str:
    try:
        return os.readlink(link)
    except OSError:  # closed meanwhile
        return ""


def _gone(root: str, within_s: float) -> list[str]:
    """Poll until no process names `root`; what is still alive at the deadline, as 'pid command'."""
    deadline = time.monotonic() + within_s
    while True:
        alive = _processes_naming(root)
        if not alive or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    described = []
    for pid in alive:
        try:
            argv = (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        described.append(f"{pid} {argv[:160].decode(errors='replace')}")
    return described


def _write_jobs(path: Path, problem: Problem, batch: dict[str, str]) -> list[dict]:
    lines = [job_line(job_id, problem, text) for job_id, text in batch.items()]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return lines


def _results(out: Path) -> list[dict]:
    """The complete verdict lines, in file order (a line torn by a kill is not one, as for the CLI)."""
    rows = []
    for line in out.read_text().splitlines() if out.exists() else []:
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return rows


def _command(jobs: Path, out: Path, config: EvalConfig, *extra: str) -> list[str]:
    run = [sys.executable, "-m", "evaluator", "run", str(jobs), "--out", str(out)]
    return [*run, "--config", json.dumps(config.to_dict()), *extra]


@pytest.mark.slow
@needs_ray
def test_a_two_cpu_cluster_judges_a_batch_as_the_local_run_does(
    tmp_path: Path,
    cpu_config: EvalConfig,
    relu_problem: Problem,
    ray_cluster: tuple[str, dict[str, str]],
) -> None:
    """Through a standing cluster's address, so the evaluator package travels as a runtime_env module. The
    job ids are a deferred run's (`<thread>|<job>`): run.py reads the results back as it does the local
    run's."""
    from graph.runner.deferred import file_job_id, load_results  # run.py's reader of deferred results

    address, env = ray_cluster
    jobs = tmp_path / "jobs.jsonl"
    batch = {file_job_id("thread-a", job_id): text for job_id, text in BATCH.items()}
    lines = _write_jobs(jobs, relu_problem, batch)
    local = evaluate_many([job_from_line(line, cpu_config) for line in lines], cpu_config)

    out = tmp_path / "results.jsonl"
    run = subprocess.run(
        _command(jobs, out, cpu_config, "--ray", address),
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert f"{len(BATCH)}/{len(BATCH)}" in run.stderr  # the same progress line as the local run
    rows = _results(out)
    assert sorted(r["job_id"] for r in rows) == sorted(batch)  # each job once
    by_id = load_results(out)  # as run.py --resume RUN --results OUT reads them
    for line, verdict in zip(lines, local, strict=True):
        got = by_id[line["job_id"]]
        assert {k: got[k] for k in FLAGS} == {k: verdict[k] for k in FLAGS}, line["job_id"]
    assert {r["verdict"] for r in rows} >= {"correct", "wrong_output", "no_code", "compile_error"}


@pytest.mark.slow
@needs_ray
def test_a_killed_cluster_run_resumes_without_losing_or_repeating_a_verdict(
    tmp_path: Path, cpu_config: EvalConfig, relu_problem: Problem, ray_env: dict[str, str]
) -> None:
    """The CLI starts its own 2-CPU cluster and is SIGKILLed, whole process group, once a verdict is out.

    Nothing is asserted about where the kill lands (mid-build, mid-run, or after the batch ended on a
    fast machine); only that no Ray or evaluator process outlives it and the rerun judges exactly the
    jobs without a verdict."""
    batch = {**BATCH, "hang": cases.HANG}
    jobs = tmp_path / "jobs.jsonl"
    _write_jobs(jobs, relu_problem, batch)
    out = tmp_path / "results.jsonl"
    command = _command(jobs, out, cpu_config, "--ray", "--ray-cpus", "2")
    with open(tmp_path / "killed.log", "w") as log:
        cli = subprocess.Popen(command, cwd=REPO, env=ray_env, stderr=log, start_new_session=True)
    try:
        deadline = time.monotonic() + 600  # the extension may still need its one build
        while not _results(out) and cli.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        try:
            os.killpg(cli.pid, signal.SIGKILL)
        except ProcessLookupError:  # the batch had already ended
            pass
    finally:
        cli.kill()
        cli.wait()
    left = _gone(ray_env["RAY_TMPDIR"], within_s=60)
    assert not left, "outlived the killed run:\n" + "\n".join(left)

    ids = [r["job_id"] for r in _results(out)]
    assert len(ids) == len(set(ids)) and set(ids) <= set(batch), ids

    resumed = subprocess.run(
        _command(jobs, out, cpu_config, "--ray", "--ray-cpus", "2"),
        cwd=REPO,
        env=ray_env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    todo = len(batch) - len(ids)
    assert f"{len(batch)} jobs, {len(ids)} already done, {todo} to run" in resumed.stderr
    rows = _results(out)
    after = [r["job_id"] for r in rows]
    assert after[: len(ids)] == ids and sorted(after) == sorted(batch), after
    verdicts = {r["job_id"]: r["verdict"] for r in rows}
    assert verdicts["ok"] == "correct" and verdicts["wrong"] == "wrong_output"
    assert verdicts["nocode"] == "no_code" and verdicts["cerr"] == "compile_error"
    assert verdicts["hang"] == "timeout"
    assert not _gone(ray_env["RAY_TMPDIR"], within_s=60)  # a run that ends shuts its cluster down


def test_without_ray_the_cli_never_imports_it_and_asked_for_it_says_how_to_install(
    tmp_path: Path, cpu_config: EvalConfig, relu_problem: Problem
) -> None:
    jobs = tmp_path / "jobs.jsonl"
    _write_jobs(jobs, relu_problem, {"nocode": cases.NO_CODE})
    args = ["run", str(jobs), "--backend", "cpu", "--cache-dir", cpu_config.cache_dir]
    local = (
        "import sys; from evaluator.__main__ import main; "
        f"code = main({[*args, '--out', str(tmp_path / 'local.jsonl')]!r}); print(code, 'ray' in sys.modules)"
    )
    ran = subprocess.run([sys.executable, "-c", local], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0 and ran.stdout.split() == ["0", "False"], ran.stderr[-3000:]

    out = tmp_path / "ray.jsonl"
    missing = (
        "import sys; sys.modules['ray'] = None; from evaluator.__main__ import main; "  # import ray fails
        f"main({[*args, '--out', str(out), '--ray']!r})"
    )
    ran = subprocess.run(
        [sys.executable, "-c", missing], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert ran.returncode == 1 and "Traceback" not in ran.stderr, ran.stderr[-3000:]
    assert ran.stderr.strip().splitlines()[-1] == (
        "python -m evaluator: install the ray extra: pip install -e '.[ray]' (or pip install 'ray>=2.40')"
    )
    assert _results(out) == []


def test_a_line_torn_by_a_kill_is_cut_before_the_next_verdict(
    tmp_path: Path, cpu_config: EvalConfig, relu_problem: Problem
) -> None:
    """The writer both paths share: a rerun after a kill mid-write does not fuse its first verdict with the
    torn line (that job has no verdict, so it is judged again)."""
    jobs = tmp_path / "jobs.jsonl"
    _write_jobs(jobs, relu_problem, {"first": cases.NO_CODE, "torn": cases.NO_CODE})
    out = tmp_path / "results.jsonl"
    out.write_text(json.dumps({"job_id": "first", "verdict": "no_code"}) + '\n{"job_id": "torn", "verd')
    args = ["run", str(jobs), "--out", str(out), "--backend", "cpu", "--cache-dir", cpu_config.cache_dir]
    ran = subprocess.run(
        [sys.executable, "-m", "evaluator", *args], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert ran.returncode == 0 and "2 jobs, 1 already done, 1 to run" in ran.stderr, ran.stderr[-3000:]
    assert [json.loads(line)["job_id"] for line in out.read_text().splitlines()] == ["first", "torn"]
