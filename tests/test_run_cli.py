"""run.py end to end: help, listing, a scripted-model sweep, deferred evaluation, kill -9 and resume.

The scripted model (tests/graph/runner/scripted_backend.py) answers without code, so the evaluator's real
verdicts are a fast `no_code`; everything else (graphs, checkpoints, job files, `python -m evaluator run`)
is the real thing. The real model's runs live in the slow tests at the end.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from itertools import dropwhile
from pathlib import Path

import pytest

import run
from evaluator.verdict import VERDICTS
from graph.runner.jsonl import read_jsonl
from graph.runner.rundir import RunDir
from nodes.context import STRATEGIES, Context, choices
from nodes.model.llm import use_model

REPO = Path(__file__).resolve().parent.parent
SCRIPTED_DIR = REPO / "tests" / "graph" / "runner"
sys.path.insert(0, str(SCRIPTED_DIR))
from scripted_backend import ScriptedBackend, child_env  # noqa: E402


def _env(**extra: str) -> dict[str, str]:
    return child_env(REPO, PYTHONUNBUFFERED="1", **extra)


def test_help_says_what_the_default_run_does_and_costs() -> None:
    out = subprocess.run(
        [sys.executable, "run.py", "--help"], cwd=REPO, capture_output=True, text=True, check=True
    )
    for flag in (
        "--strategy",
        "--preset",
        "--kernelbench-dir",
        "--level",
        "--problems",
        "--ambition",
        "--prompt",
        "--backend",
        "--evaluator",
        "--resume",
        "--results",
        "--write-jobs",
        "--model",
        "--hf-repo",
        "-n",
        "-k",
        "--set",
    ):
        assert flag in out.stdout
    assert "6 minutes (358 s)" in out.stdout and "45-60 minutes" in out.stdout


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="the CPU host's defaults")
def test_a_host_without_a_gpu_writes_region_kernels_and_defers_judging_them() -> None:
    """Region kernels are CUDA whatever the host: written and NVRTC-checked here, judged on a GPU host;
    whole programs on such a host fall back to C++ kernels judged here."""
    settings = run.new_settings(run.build_parser().parse_args([]))
    fields = settings["context_fields"]
    assert (fields["backend"], fields["evaluator"], settings["format"]) == ("cuda", "deferred", "regions")
    settings = run.new_settings(run.build_parser().parse_args(["--format", "program"]))
    assert settings["context_fields"]["backend"] == "cpu" and "evaluator" not in settings["context_fields"]
    assert settings["format"] == "program"
    fields = run.new_settings(run.build_parser().parse_args(["--evaluator", "local"]))["context_fields"]
    assert (fields["backend"], fields["evaluator"]) == ("cuda", "local")


def test_flag_choices_and_defaults_come_from_the_context() -> None:
    parser = run.build_parser()
    actions = {a.dest: a for a in parser._actions}
    assert tuple(actions["strategy"].choices) == STRATEGIES
    for name in ("ambition", "backend", "evaluator"):
        assert tuple(actions[name].choices) == choices(name)
    assert f"(default {Context().rounds})" in actions["rounds"].help
    plain = run.new_settings(parser.parse_args(["--backend", "cpu"]))
    assert plain["strategies"] == list(STRATEGIES)
    assert run.make_context(plain) == Context(backend="cpu")
    preset = run.new_settings(parser.parse_args(["--preset", "naive-agent", "-n", "2", "--backend", "cpu"]))
    assert run.make_context(preset) == Context.from_preset("naive-agent", samples=2, backend="cpu")
    assert preset["strategies"] == ["agent"]


def test_list_tasks_shows_demo_and_kernelbench_tasks(kernelbench_dir, capsys) -> None:
    assert (
        run.main(
            ["--list-tasks", "--kernelbench-dir", str(kernelbench_dir), "--level", "2", "--problems", "1"]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "L0/Small_MLP" in out and "L2/Conv2D_ReLU_BiasAdd" in out and "repaired-agent" in out


def test_a_broken_problem_file_is_skipped_with_its_reason_and_a_bad_selection_is_one_line(
    kernelbench_dir, tmp_path, capsys
) -> None:
    (tmp_path / "level1").mkdir()
    good = next((kernelbench_dir / "level1").glob("1_*.py"))
    (tmp_path / "level1" / good.name).write_text(good.read_text())
    (tmp_path / "level1" / "2_Broken.py").write_text("def broken(:\n")
    assert run.main(["--list-tasks", "--kernelbench-dir", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert "L1/Square_matrix_multiplication_" in captured.out
    assert f"skipped: {tmp_path}/level1/2_Broken.py: not valid Python" in captured.err
    settings = run.new_settings(run.build_parser().parse_args(["--kernelbench-dir", str(tmp_path)]))
    assert [t["name"] for t in settings["tasks"]] == ["Square_matrix_multiplication_"]
    for args, reason in [
        (["--kernelbench-dir", str(tmp_path / "missing")], "does not exist"),
        (["--kernelbench-dir", str(tmp_path), "--level", "7"], "no task matches level 7"),
        (["--kernelbench-dir", str(tmp_path), "--problems", "3-1"], "the end is before the start"),
    ]:
        with pytest.raises(SystemExit, match=f"^run.py: .*{reason}"):
            run.main(["--out", str(tmp_path / "run"), *args])
        assert not (tmp_path / "run").exists()  # nothing was started


def test_a_sweep_writes_results_trace_and_table(tmp_path, capsys) -> None:
    backend = ScriptedBackend()
    with use_model(backend):
        assert (
            run.main(
                [
                    "-s",
                    "zero_shot",
                    "-s",
                    "agent",
                    "--tasks",
                    "1-2",
                    "--backend",
                    "cpu",
                    "-k",
                    "1",
                    "--ambition",
                    "conservative",
                    "--set",
                    "feedback=naive",
                    "--set",
                    "replans=0",
                    "--prompt",
                    "generate=Write {{source}} faster.",
                    "--out",
                    str(tmp_path / "run"),
                    "--no-live",
                ]
            )
            == 0
        )
    out = capsys.readouterr().out
    results = read_jsonl(tmp_path / "run" / "results.jsonl")
    assert sorted((r["task"], r["strategy"]) for r in results) == sorted(
        (t, s) for t in ("L0/Scaled_LeakyReLU_Shift", "L0/Row_Sum_Of_Squares") for s in ("zero_shot", "agent")
    )
    assert {r["verdict"] for r in results} == {
        "no_code"
    }  # the evaluator's real verdict on a code-less answer
    assert all(r["context"]["ambition"] == "conservative" and r["backend"] == "cpu" for r in results)
    assert all(r["context"]["feedback"] == "naive" and r["context"]["replans"] == 0 for r in results)
    assert all(r["model"]["name"] == "ScriptedBackend" for r in results)
    git = ["git", "-C", str(Path(run.__file__).parent), "rev-parse", "--short=12", "HEAD"]
    head = subprocess.run(git, capture_output=True, text=True).stdout
    assert {r["commit"].removesuffix("+dirty") for r in results} == {head.strip()}  # which pipeline wrote it
    trace = read_jsonl(tmp_path / "run" / "trace.jsonl")
    generations = [e for e in trace if e["kind"] == "node" and e["node"] == "generate"]
    assert generations and all(e["messages"] and e["completion"] for e in generations)
    # the --prompt override reached the model: the user message is the override with the source filled in
    assert any(m["content"].startswith("Write import torch") for e in generations for m in e["messages"])
    assert "results per level" in out and "model: " in out


def test_deferred_round_trip_through_the_evaluator_cli(tmp_path) -> None:
    run_dir = tmp_path / "run"
    base = [sys.executable, "run.py", "--no-live"]
    first = subprocess.run(
        base
        + [
            "-s",
            "zero_shot",
            "-s",
            "iterative_refinement",
            "-k",
            "1",
            "--tasks",
            "3",
            "--backend",
            "cpu",
            "--evaluator",
            "deferred",
            "--out",
            str(run_dir),
        ],
        cwd=REPO,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert first.returncode == 0, first.stderr[-3000:]
    jobs = read_jsonl(run_dir / "jobs.jsonl")
    assert len(jobs) == 2 and not read_jsonl(run_dir / "results.jsonl")
    assert "python -m evaluator run" in first.stdout
    assert "written here, waiting for a GPU host (2 candidates)" in first.stdout  # what each strategy wrote
    assert "whole program" in first.stdout  # the cpu backend writes programs
    assert "model: ScriptedBackend" in first.stdout  # scripted_site's sitecustomize swapped the model
    (run_dir / "jobs.jsonl").unlink()
    with RunDir(run_dir).sweeping():  # as if another process were still sweeping the run
        rewritten, second = [
            subprocess.run(
                base + ["--resume", str(run_dir), *extra],
                cwd=REPO,
                env=_env(),
                capture_output=True,
                text=True,
                timeout=300,
            )
            for extra in (["--write-jobs"], [])
        ]
    assert rewritten.returncode == 0, rewritten.stderr[-3000:]
    assert read_jsonl(run_dir / "jobs.jsonl") == jobs and "model:" not in rewritten.stdout
    assert second.returncode == 1 and f"being swept by another process (pid {os.getpid()})" in second.stderr
    evaluated = subprocess.run(
        [
            sys.executable,
            "-m",
            "evaluator",
            "run",
            str(run_dir / "jobs.jsonl"),
            "--out",
            str(tmp_path / "verdicts.jsonl"),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert evaluated.returncode == 0, evaluated.stderr[-3000:]
    resumed = subprocess.run(
        base + ["--resume", str(run_dir), "--results", str(tmp_path / "verdicts.jsonl")],
        cwd=REPO,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    results = read_jsonl(run_dir / "results.jsonl")
    assert sorted(r["strategy"] for r in results) == ["iterative_refinement", "zero_shot"]
    assert {r["verdict"] for r in results} == {"no_code"} and read_jsonl(run_dir / "jobs.jsonl") == []
    assert all(r["model"]["name"] == "ScriptedBackend" and r["model"]["scripted"] for r in results)


def _sweep_args(out: Path) -> list[str]:
    return [
        sys.executable,
        "run.py",
        "--no-live",
        "--tasks",
        "1-3",
        "-s",
        "zero_shot",
        "-s",
        "iterative_refinement",
        "-s",
        "agent",
        "-k",
        "2",
        "-n",
        "2",
        "--set",
        "retrieval_k=0",
        "--backend",
        "cpu",
        "--out",
        str(out),
    ]


def _inside_a_graph(run_dir: Path, calls: Path, delay: float) -> bool:
    """True once an unfinished graph has a finished node on disk and a model call began under half a delay
    ago: graphs run one at a time, so the call is that graph's and a kill now lands mid-graph, not in the
    instant between its last node and its result."""
    if not calls.exists() or not (starts := calls.read_text().split()):
        return False
    if time.time() - float(starts[-1]) > delay / 2:
        return False
    done = {(r["task"], r["strategy"]) for r in read_jsonl(run_dir / "results.jsonl")}
    return any(
        e["kind"] == "node" and (e["task"], e["strategy"]) not in done
        for e in read_jsonl(run_dir / "trace.jsonl")
    )


def _started_over(kinds: list[str]) -> bool:
    """A graph's trace has a start after anything else of it: it ran, then began again from scratch."""
    return "start" in dropwhile(lambda kind: kind == "start", kinds)


def _leftovers(pid: int) -> list[int]:
    """Live processes of a killed run.py: its session (it was started in a new one) or evaluator workers
    whose spec names it as their parent (they run in sessions of their own)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            state, _, _, session = (proc / "stat").read_text().rsplit(")", 1)[1].split()[:4]
            if state == "Z":  # exited, waiting for a reaper
                continue
            if int(session) == pid:
                found.append(int(proc.name))
                continue
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            if b"evaluator.worker" in argv:
                spec = json.loads(Path(argv[argv.index(b"evaluator.worker") + 1].decode()).read_text())
                if spec.get("parent_pid") == pid:
                    found.append(int(proc.name))
        except (OSError, ValueError, IndexError):
            continue
    return found


@pytest.mark.slow  # three sweeps of run.py, ~25 s
def test_kill_9_mid_sweep_then_resume_loses_and_repeats_nothing(tmp_path) -> None:
    """Whenever the kill lands (mid-graph, between a result and the next graph, or after the sweep ended),
    the resumed sweep ends as an uninterrupted one did, with every result once, nothing finished run again
    and no graph that had run a node started over."""
    delay = 0.4
    calls = tmp_path / "calls.txt"
    env = _env(SCRIPTED_DELAY=str(delay))
    reference = subprocess.run(
        _sweep_args(tmp_path / "whole"), cwd=REPO, env=env, capture_output=True, text=True, timeout=600
    )
    assert reference.returncode == 0, reference.stderr[-3000:]
    whole = {
        (r["task"], r["strategy"]): (r["verdict"], r["candidates"], r["rounds"])
        for r in read_jsonl(tmp_path / "whole" / "results.jsonl")
    }
    expected = sorted(whole)
    assert len(expected) == 9

    killed_dir = tmp_path / "killed"
    log = tmp_path / "killed.log"
    with open(log, "w") as sink:
        proc = subprocess.Popen(
            _sweep_args(killed_dir),
            cwd=REPO,
            env=env | {"SCRIPTED_CALLS": str(calls)},
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        # Aimed at a model call inside a graph, a few results in (or, failing that, late in the sweep);
        # on a busy machine it may land anywhere, even after the end, so where it landed is not checked.
        deadline = time.monotonic() + 300
        while proc.poll() is None and time.monotonic() < deadline:
            done = len(read_jsonl(killed_dir / "results.jsonl"))
            if (done >= 3 and _inside_a_graph(killed_dir, calls, delay)) or done >= 6:
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)  # a no-op when the sweep has already ended
        proc.wait()
    deadline = time.monotonic() + 60
    while (left := _leftovers(proc.pid)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not left, f"processes {left} outlived the killed sweep"
    before = read_jsonl(killed_dir / "results.jsonl")
    trace_before = read_jsonl(killed_dir / "trace.jsonl")
    finished = [(r["task"], r["strategy"]) for r in before]
    assert len(set(finished)) == len(finished), "a result was written twice before the kill"

    resumed = subprocess.run(
        _sweep_args(killed_dir)[:-2] + ["--resume", str(killed_dir)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    after = read_jsonl(killed_dir / "results.jsonl")
    keys = [(r["task"], r["strategy"]) for r in after]
    assert not [k for k, n in Counter(keys).items() if n > 1], "a result was written twice"
    assert sorted(keys) == expected
    # the scripted model is deterministic: every graph ended as it did without the kill
    assert {
        k: (r["verdict"], r["candidates"], r["rounds"]) for k, r in zip(keys, after, strict=True)
    } == whole
    assert after[: len(before)] == before  # finished results kept as they were

    trace = read_jsonl(killed_dir / "trace.jsonl")
    assert trace[: len(trace_before)] == trace_before
    resumed_events = trace[len(trace_before) :]
    # A graph whose result was on disk at the kill is not run again.
    assert not [e for e in resumed_events if (e["task"], e["strategy"]) in set(finished)]
    # Every graph was started, and started again only when nothing of it had run (killed before its
    # first checkpoint): one cut later went on from its checkpoint, not from scratch.
    kinds: dict[tuple[str, str], list[str]] = {}
    for e in trace:
        kinds.setdefault((e["task"], e["strategy"]), []).append(e["kind"])
    assert sorted(kinds) == expected and all(k[0] == "start" for k in kinds.values())
    restarted = [pair for pair, k in kinds.items() if _started_over(k)]
    assert not restarted, f"graphs started over after they had run: {restarted}"
    # One result event per graph written by the sweep; only a kill between a graph's result line and its
    # result event (the line is on disk, so the resume does not write it again) leaves a graph without one.
    results_traced = Counter((e["task"], e["strategy"]) for e in trace if e["kind"] == "result")
    assert set(results_traced.values()) == {1} and set(expected) - set(finished) <= set(results_traced)
    assert json.loads((killed_dir / "run.json").read_text())["strategies"] == [
        "zero_shot",
        "iterative_refinement",
        "agent",
    ]


@pytest.mark.slow
def test_real_model_cpu_backend_records_a_real_verdict(tmp_path) -> None:
    """The embedded model on the demo elementwise task, C++ backend: a real verdict, tokens and a trace."""
    out = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "run.py", "--no-live", "--preset", "cpu-smoke", "--tasks", "1", "--out", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (result,) = read_jsonl(out / "results.jsonl")
    assert result["model"]["quantisation"] and result["model"]["size_bytes"] > 10**8
    assert result["verdict"] in VERDICTS
    assert result["completion_tokens"] > 0 and result["backend"] == "cpu"
    generations = [e for e in read_jsonl(out / "trace.jsonl") if e.get("node") == "generate"]
    assert generations and generations[0]["completion"] and generations[0]["messages"]
    assert "Qwen2.5 Coder" in done.stdout  # the chosen model is printed at start
