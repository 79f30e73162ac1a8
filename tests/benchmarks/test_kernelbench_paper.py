"""The paper experiment's plumbing: one job file across runs, verdicts back to their runs, the math."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from benchmarks import kernelbench_paper as paper
from benchmarks import paper_report as report
from evaluator.verdict import make, summary
from graph.runner.jsonl import read_jsonl


def _write(path: Path, lines: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_jobs_of_all_runs_go_out_in_one_file_and_verdicts_come_back_to_their_run(tmp_path: Path) -> None:
    """Two agent configurations share thread ids; the configuration prefix keeps their verdicts apart."""
    job = {"job_id": "agent:L1/Relu|Relu/r0s0", "problem": {}, "candidate": "x", "config": {}}
    _write(tmp_path / "repaired_agent" / "jobs.jsonl", [job])
    _write(tmp_path / "naive_agent" / "jobs.jsonl", [job | {"candidate": "y"}])
    out = tmp_path / "all_jobs.jsonl"
    assert paper.gather_jobs(tmp_path, out) == 0
    ids = [line["job_id"] for line in read_jsonl(out)]
    assert sorted(ids) == ["naive_agent::agent:L1/Relu|Relu/r0s0", "repaired_agent::agent:L1/Relu|Relu/r0s0"]
    verdicts = tmp_path / "verdicts.jsonl"
    _write(
        verdicts,
        [{"job_id": i, "verdict": v} for i, v in zip(sorted(ids), ["correct", "timeout"], strict=True)],
    )
    kept = paper.split_verdicts(verdicts, tmp_path)
    assert read_jsonl(kept["naive_agent"]) == [{"job_id": job["job_id"], "verdict": "correct"}]
    assert read_jsonl(kept["repaired_agent"]) == [{"job_id": job["job_id"], "verdict": "timeout"}]
    # answered jobs never go out again (a run still generating its next round keeps the old jobs.jsonl)
    _write(
        tmp_path / "zero_shot" / "jobs.jsonl",
        [job | {"job_id": "zero_shot:L1/Relu|Relu/r0s0", "candidate": "z"}],
    )
    assert paper.gather_jobs(tmp_path, out) == 0
    assert [line["job_id"] for line in read_jsonl(out)] == ["zero_shot::zero_shot:L1/Relu|Relu/r0s0"]
    assert paper.gather_jobs(tmp_path, out, ["naive_agent"]) == 0 and read_jsonl(out) == []


def test_jobs_are_read_from_each_runs_checkpoints_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run still generating has written no job file yet; run.py --write-jobs reads its paused graphs."""
    calls: list[list[str]] = []

    def run(cmd: list[str]) -> subprocess.CompletedProcess:
        calls.append(cmd)
        job = {"job_id": "zero_shot:L1/Relu|Relu/r0s0", "problem": {}, "candidate": "x", "config": {}}
        _write(Path(cmd[3]) / "jobs.jsonl", [job])
        return subprocess.CompletedProcess(cmd, 0 if "zero_shot" in cmd[3] else 1)

    monkeypatch.setattr(paper.subprocess, "run", run)
    for name in ("zero_shot", "naive_agent"):
        _write(tmp_path / name / "run.json", [{}])
    out = tmp_path / "all_jobs.jsonl"
    assert paper.gather_jobs(tmp_path, out, ["zero_shot", "naive_agent"]) == 0
    assert [c[2:] for c in calls] == [
        ["--resume", str(tmp_path / n), "--write-jobs"] for n in ("zero_shot", "naive_agent")
    ]
    assert [line["job_id"] for line in read_jsonl(out)] == ["zero_shot::zero_shot:L1/Relu|Relu/r0s0"]


def test_profiling_configs_refuse_to_start_without_every_profile(
    tmp_path: Path, kernelbench_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert paper.missing_profiles(kernelbench_dir, paper.PROFILES) == []  # the committed store is complete
    store = tmp_path / "profiles"
    shutil.copytree(paper.PROFILES, store)
    dropped = sorted(store.glob("l3_p4_*.json"))
    assert len(dropped) == 1
    dropped[0].unlink()
    monkeypatch.setattr(paper, "PROFILES", store)
    assert paper.missing_profiles(kernelbench_dir, store) == [dropped[0].name.rsplit("_NVIDIA", 1)[0]]
    assert paper.generate(["profiling_guided"], tmp_path / "runs", kernelbench_dir) == 1
    assert not (tmp_path / "runs" / "profiling_guided").exists()


def test_pass_at_k_is_the_unbiased_best_of_k_estimate() -> None:
    assert report.pass_at_k(8, 0, 8) == 0.0
    assert report.pass_at_k(8, 1, 1) == pytest.approx(1 / 8)
    assert report.pass_at_k(8, 1, 4) == pytest.approx(0.5)
    assert report.pass_at_k(8, 1, 8) == 1.0


def _record(config: str, level: int, verdicts: list[str], **best) -> dict:
    return {
        "config": config,
        "level": level,
        "candidates": [
            summary(
                make(
                    v,
                    speedup_eager=1.2 if v == "correct" else None,
                    custom_kernel_share=1.0 if v == "correct" else None,
                )
            )
            for v in verdicts
        ],
        "prompt_tokens": 1000,
        "completion_tokens": 500,
        "node_seconds": 60.0,
        **best,
    }


def test_table_counts_strict_correct_fast_1_and_kernelbench_correct_without_custom_work() -> None:
    records = [
        _record(
            "zs",
            1,
            ["correct"],
            correct_strict=True,
            correct_kernelbench=True,
            speedup_eager=1.44,
            speedup_compile=1.21,
            custom_kernel_share=0.9,
        ),
        _record(
            "zs",
            1,
            ["static_reject"],
            correct_strict=False,
            correct_kernelbench=True,
            custom_kernel_share=0.0,
        ),
        _record("zs", 2, ["compile_error"], correct_strict=False, correct_kernelbench=False),
    ]
    rows = {(r["config"], r["level"]): r for r in report.table_rows(records)}
    level1, overall = rows[("zs", "1")], rows[("zs", "all")]
    assert (level1["tasks"], level1["correct_pct"], level1["correct_kernelbench_pct"]) == (2, 50.0, 100.0)
    assert level1["fast_1_pct"] == 50.0 and level1["geomean_speedup_eager"] == pytest.approx(1.44)
    assert level1["kernelbench_correct_no_custom_work"] == 1 and level1["median_custom_share"] == 0.9
    assert overall["tasks"] == 3 and overall["correct_pct"] == pytest.approx(100 / 3)
    assert overall["tokens_per_task"] == 1500 and overall["seconds_per_task"] == 60.0


def test_best_of_n_curve_and_report_files(tmp_path: Path) -> None:
    eight = ["wrong_output"] * 7 + ["correct"]
    copied = _record("x", 1, ["static_reject"] * 8, correct_strict=False) | {"task": "b"}
    for candidate in copied["candidates"][:2]:  # the reference, renamed: no custom work
        candidate.update(correct_kernelbench=True, custom_kernel_share=0.0)
    _write(
        tmp_path / "runs" / "profiling_guided_n8" / "results.jsonl",
        [
            _record("x", 1, eight, correct_strict=True, speedup_eager=1.2, custom_kernel_share=1.0)
            | {"task": "a"},
            copied,
        ],
    )
    _write(
        tmp_path / "runs" / "profiling_guided_n8" / "verdicts.jsonl",
        [{"job_id": "j", "verdict": "correct", "evidence": {"gpu": "NVIDIA H200", "torch": "2.11.0+cu130"}}],
    )
    curve = report.best_of_n(report.load(tmp_path / "runs", ["profiling_guided_n8"]))["profiling_guided_n8"]
    assert curve["correct"] == pytest.approx([100 * 1 / 16, 100 * 2 / 16, 100 * 4 / 16, 50.0])
    assert curve["fast_1"] == curve["correct"] == curve["kernelbench_custom_work"]
    two_of_eight = [1 - 6 / 8, 1 - 15 / 28, 1 - 15 / 70, 1.0]  # task b: 2 KB-correct of 8
    assert curve["correct_kernelbench"] == pytest.approx(
        [100 * (a + b) / 2 for a, b in zip([1 / 8, 2 / 8, 4 / 8, 1.0], two_of_eight, strict=True)]
    )
    out = tmp_path / "out"
    assert report.write_report(tmp_path / "runs", ["profiling_guided_n8", "zero_shot"], out) == 0
    assert {"results.jsonl", "summary.json", "table.md", "strategies.png", "best_of_n.png"} <= {
        p.name for p in out.iterdir()
    }
    assert read_jsonl(out / "verdicts" / "profiling_guided_n8.jsonl")[0]["verdict"] == "correct"
    table = (out / "table.md").read_text()
    assert "| profiling_guided_n8 | 2 | 8 | 50 | 100 | 50 | 50 |" in table
    assert "| profiling_guided_n8 | 2 | 1 | 6 | 19 | 6 | 6 |" in table
    assert "GPU NVIDIA H200; torch 2.11.0+cu130" in table  # what the verdicts recorded, not assumed
    assert "fp32 atol 0.0001, rtol 0.0001, 5 seeded trials plus a signed-input trial, TF32 off" in table
    assert report.write_report(tmp_path / "empty", ["zero_shot"], tmp_path / "none") == 1


def test_best_of_n_runs_that_finished_different_tasks_are_also_compared_on_the_tasks_they_share(
    tmp_path: Path,
) -> None:
    """One run waits on the GPU host for task b: its curve covers a only, so a shared-task table is added."""
    good, bad = ["correct"] + ["wrong_output"] * 7, ["wrong_output"] * 8
    done = {"correct_strict": False, "speedup_eager": None, "custom_kernel_share": None}
    _write(
        tmp_path / "runs" / "profiling_guided_n8" / "results.jsonl",
        [_record("x", 1, bad, **done) | {"task": "a"}, _record("x", 1, good, **done) | {"task": "b"}],
    )
    _write(
        tmp_path / "runs" / "repaired_agent_n8" / "results.jsonl",
        [_record("x", 1, good, **done) | {"task": "a"}],
    )
    records = report.load(tmp_path / "runs", ["profiling_guided_n8", "repaired_agent_n8"])
    curves = report.best_of_n(records)
    assert report.common_tasks(records, curves) == {"a"}
    assert report.common_tasks(records, {"profiling_guided_n8": curves["profiling_guided_n8"]}) is None
    out = tmp_path / "out"
    assert report.write_report(tmp_path / "runs", ["profiling_guided_n8", "repaired_agent_n8"], out) == 0
    shared = json.loads((out / "summary.json").read_text())["best_of_n_common_tasks"]
    assert shared["profiling_guided_n8"]["tasks"] == shared["repaired_agent_n8"]["tasks"] == 1
    assert shared["profiling_guided_n8"]["correct"] == [0.0] * 4  # task b is left out
    assert shared["repaired_agent_n8"]["correct"] == pytest.approx([12.5, 25.0, 50.0, 100.0])
    table = (out / "table.md").read_text()
    assert "| profiling_guided_n8 | 2 | 8 | 50 |" in table  # each run over its own tasks
    assert "on the 1 tasks every best-of-n run has finished" in table
    assert "| profiling_guided_n8 | 1 | 8 | 0 |" in table


def test_identical_candidates_are_evaluated_once_and_every_copy_gets_the_verdict(tmp_path: Path) -> None:
    """Iterative refinement's greedy first round repeats zero-shot's candidates token for token."""
    job = {
        "problem": {"name": "Relu", "source": "s"},
        "candidate": "same text",
        "config": {"backend": "cuda"},
    }
    _write(tmp_path / "zero_shot" / "jobs.jsonl", [job | {"job_id": "zero_shot:L1/Relu|Relu/r0s0"}])
    _write(
        tmp_path / "iterative_refinement" / "jobs.jsonl",
        [
            job | {"job_id": "iterative_refinement:L1/Relu|Relu/r0s0"},
            job | {"job_id": "iterative_refinement:L1/Gelu|Gelu/r0s0", "candidate": "other text"},
        ],
    )
    out = tmp_path / "jobs.jsonl"
    paper.gather_jobs(tmp_path, out)
    paper.gather_jobs(tmp_path, out)  # gathering twice must not duplicate the aliases
    ids = [line["job_id"] for line in read_jsonl(out)]
    assert ids == [
        "zero_shot::zero_shot:L1/Relu|Relu/r0s0",
        "iterative_refinement::iterative_refinement:L1/Gelu|Gelu/r0s0",
    ]
    verdicts = tmp_path / "verdicts.jsonl"
    _write(
        verdicts, [{"job_id": ids[0], "verdict": "wrong_output"}, {"job_id": ids[1], "verdict": "correct"}]
    )
    kept = paper.split_verdicts(verdicts, tmp_path)
    assert [line["verdict"] for line in read_jsonl(kept["zero_shot"])] == ["wrong_output"]
    assert sorted((line["job_id"], line["verdict"]) for line in read_jsonl(kept["iterative_refinement"])) == [
        ("iterative_refinement:L1/Gelu|Gelu/r0s0", "correct"),
        ("iterative_refinement:L1/Relu|Relu/r0s0", "wrong_output"),
    ]


def test_a_candidate_judged_in_an_earlier_gathering_takes_that_verdict_and_stays_home(tmp_path: Path) -> None:
    """Zero-shot judged in one GPU call and finished (its jobs.jsonl empty again); refinement's identical
    first round, gathered later, takes zero-shot's verdict and is not sent."""
    job = {"problem": {"name": "Relu", "source": "s"}, "candidate": "same text", "config": {}}
    _write(tmp_path / "zero_shot" / "jobs.jsonl", [job | {"job_id": "zs/r0s0"}])
    out = tmp_path / "jobs.jsonl"
    paper.gather_jobs(tmp_path, out, ["zero_shot"])
    assert [line["job_id"] for line in read_jsonl(out)] == ["zero_shot::zs/r0s0"]
    _write(tmp_path / "verdicts.jsonl", [{"job_id": "zero_shot::zs/r0s0", "verdict": "correct"}])
    paper.split_verdicts(tmp_path / "verdicts.jsonl", tmp_path)
    _write(tmp_path / "zero_shot" / "jobs.jsonl", [])
    _write(tmp_path / "iterative_refinement" / "jobs.jsonl", [job | {"job_id": "ir/r0s0"}])
    paper.gather_jobs(tmp_path, out, ["iterative_refinement"])
    assert read_jsonl(out) == []
    assert read_jsonl(tmp_path / "iterative_refinement" / "verdicts.jsonl") == [
        {"job_id": "ir/r0s0", "verdict": "correct"}
    ]
    paper.gather_jobs(tmp_path, out, ["iterative_refinement"])  # answered now: neither sent nor copied again
    assert len(read_jsonl(tmp_path / "iterative_refinement" / "verdicts.jsonl")) == 1


def test_generate_continues_a_run_with_the_verdicts_handed_back(
    tmp_path: Path, kernelbench_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[list[str]] = []

    def run(cmd: list[str]) -> subprocess.CompletedProcess:
        calls.append(cmd)
        return subprocess.CompletedProcess(cmd, 0)

    monkeypatch.setattr(paper.subprocess, "run", run)
    _write(tmp_path / "zero_shot" / "run.json", [{}])
    assert paper.generate(["zero_shot"], tmp_path, kernelbench_dir) == 0
    assert calls[-1][2:4] == ["--resume", str(tmp_path / "zero_shot")] and "--results" not in calls[-1]
    _write(tmp_path / "zero_shot" / "verdicts.jsonl", [{"job_id": "j", "verdict": "correct"}])
    assert paper.generate(["zero_shot"], tmp_path, kernelbench_dir) == 0
    assert calls[-1][4:6] == ["--results", str(tmp_path / "zero_shot" / "verdicts.jsonl")]
    # resume = hand the GPU host's verdicts to their run, then the same continuation
    _write(tmp_path / "gpu.jsonl", [{"job_id": "zero_shot::k", "verdict": "timeout"}])
    assert paper.resume(tmp_path / "gpu.jsonl", tmp_path, kernelbench_dir) == 0
    assert calls[-1] == calls[-2] and paper.answered(tmp_path / "zero_shot") == {"j", "k"}


def test_a_fresh_checkout_generates_only_the_tasks_the_committed_results_lack(
    tmp_path: Path, kernelbench_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """runs/ is not committed; the committed report is what survives a session, so a missing run
    directory starts from its finished tasks and the sweep skips them."""
    from graph.runner.results import ResultsFile
    from graph.runner.suite import kernelbench_tasks, task_key

    tasks = kernelbench_tasks(kernelbench_dir, [1], [1, 2, 3])
    finished = [
        {"task": task_key(t), "strategy": "agent", "verdict": "no_code", "config": "repaired_agent_n8"}
        for t in tasks[:2]
    ]
    committed = tmp_path / "committed"
    _write(committed / "results.jsonl", finished + [finished[0] | {"config": "zero_shot"}])
    _write(committed / "verdicts" / "repaired_agent_n8.jsonl", [{"job_id": "j", "verdict": "no_code"}])
    calls: list[list[str]] = []

    def run(cmd: list[str]) -> subprocess.CompletedProcess:
        calls.append(cmd)
        return subprocess.CompletedProcess(cmd, 0)

    monkeypatch.setattr(paper.subprocess, "run", run)
    runs = tmp_path / "runs"
    assert paper.generate(["repaired_agent_n8"], runs, kernelbench_dir, committed) == 0
    run = runs / "repaired_agent_n8"
    assert read_jsonl(run / "results.jsonl") == [
        {k: v for k, v in r.items() if k != "config"} for r in finished
    ]
    assert paper.answered(run) == {"j"}
    assert "--out" in calls[-1] and "--resume" not in calls[-1]  # a new run over the whole suite
    seeded = ResultsFile(run / "results.jsonl")
    assert [seeded.has(t, "agent") for t in tasks] == [True, True, False]
    seeded.close()
    # an existing run directory is never overwritten from the committed results
    _write(run / "results.jsonl", [])
    assert paper.generate(["repaired_agent_n8"], runs, kernelbench_dir, committed) == 0
    assert read_jsonl(run / "results.jsonl") == []
    assert paper.seed_from_results(runs / "naive_agent", "naive_agent", committed) == 0
    assert not (runs / "naive_agent").exists()
    # a rerun on today's pipeline (--fresh) seeds from its own committed results, never the paper's
    rerun = tmp_path / "rerun_committed"
    monkeypatch.setattr(paper, "RESULTS", committed)
    monkeypatch.setattr(paper, "RERUN", rerun)
    fresh = ["--fresh", "--runs", str(tmp_path / "rerun"), "--kernelbench", str(kernelbench_dir), "generate"]
    assert paper.main([*fresh, "repaired_agent_n8"]) == 0
    assert not (tmp_path / "rerun" / "repaired_agent_n8" / "results.jsonl").exists()
    assert "--out" in calls[-1] and "--resume" not in calls[-1]
    _write(rerun / "results.jsonl", [finished[1]])
    assert paper.main([*fresh, "naive_agent"]) == 0
    assert not (tmp_path / "rerun" / "naive_agent").exists()  # the rerun has none of naive_agent's yet
    # a later session (its run directory missing): the rerun's committed finished task is kept
    assert paper.main([*fresh, "repaired_agent_n8"]) == 0
    assert [r["task"] for r in read_jsonl(tmp_path / "rerun" / "repaired_agent_n8" / "results.jsonl")] == [
        finished[1]["task"]
    ]


def test_report_on_a_fresh_checkout_keeps_the_committed_tasks_of_every_configuration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regenerating one configuration must not drop the others from the committed report."""
    committed = tmp_path / "committed"
    old = _record("x", 1, ["correct"], correct_strict=True, speedup_eager=1.1, custom_kernel_share=1.0)
    _write(committed / "results.jsonl", [old | {"task": "a", "config": "zero_shot"}])
    new = _record("x", 1, ["wrong_output"] * 8, correct_strict=False) | {"task": "b"}
    _write(tmp_path / "runs" / "repaired_agent_n8" / "results.jsonl", [new])
    monkeypatch.setattr(paper, "RESULTS", committed)
    out = tmp_path / "out"
    assert paper.main(["--runs", str(tmp_path / "runs"), "report", "--out-dir", str(out)]) == 0
    assert sorted((r["config"], r["task"]) for r in read_jsonl(out / "results.jsonl")) == [
        ("repaired_agent_n8", "b"),
        ("zero_shot", "a"),
    ]


def test_every_setup_runs_in_both_formats_and_the_report_sets_them_side_by_side(tmp_path: Path) -> None:
    assert paper.CONFIGS["zero_shot"].args[-2:] == ("--format", "program")
    assert paper.CONFIGS["zero_shot_regions"].args[-2:] == ("--format", "regions")
    assert {paper.config_format(name) for name in paper.CONFIGS} == {"program", "regions"}
    assert len(paper.CONFIGS) == 2 * len(paper.SETUPS) + 1  # and the no-model row, regions only
    assert paper.config_format("no_model_regions") == "regions"
    assert "writer=rules" in paper.CONFIGS["no_model_regions"].args
    _write(
        tmp_path / "runs" / "zero_shot" / "results.jsonl", [_record("x", 1, ["compile_error"], task="L1/a")]
    )
    _write(
        tmp_path / "runs" / "zero_shot_regions" / "results.jsonl",
        [
            _record(
                "x",
                1,
                ["correct"],
                correct_strict=True,
                correct_kernelbench=True,
                speedup_eager=1.5,
                task="L1/a",
                name="a",
                best_id="r0s0",
            )
        ],
    )
    replaced = {"custom": {"replaced": ["aten::mul"]}}
    _write(
        tmp_path / "runs" / "zero_shot_regions" / "verdicts.jsonl",
        [{"job_id": "zero_shot:L1/a|a/r0s0", "verdict": "correct", "evidence": replaced}],
    )
    out = tmp_path / "out"
    assert report.write_report(tmp_path / "runs", ["zero_shot", "zero_shot_regions"], out) == 0
    table = (out / "table.md").read_text()
    assert "| zero_shot | all | 1 / 1 | 0 / 100 | 0 / 100 | 0 / 1 | 0 / 100 | - / 1.50x |" in table
    assert "| task | zero_shot |\n|---|---|\n| L1/a | 1.50 / - |" in table  # per task: eager / compile
    assert (out / "formats.png").stat().st_size > 0


def test_the_table_says_which_commit_finished_each_configurations_tasks() -> None:
    records = [
        {"config": "zero_shot_regions", "commit": "abc"},
        {"config": "zero_shot_regions", "commit": "abc"},
        {"config": "zero_shot_regions", "commit": "def+dirty"},
        {"config": "no_model_regions"},
    ]
    assert report.finished_commits(records) == (
        "no_model_regions not recorded: 1; zero_shot_regions abc: 2, def+dirty: 1"
    )


def test_the_model_rows_are_set_against_the_no_model_row_on_the_tasks_both_finished() -> None:
    def rec(config: str, task: str, strict: bool, eager: float | None = None) -> dict:
        return {"config": config, "task": task, "correct_strict": strict, "speedup_eager": eager}

    records = [
        rec("no_model_regions", "L1/a", True, 1.00),
        rec("no_model_regions", "L1/b", True, 1.10),
        rec("no_model_regions", "L2/c", False),
        rec("no_model_regions", "L2/d", True, 2.00),
        rec("zero_shot_regions", "L1/a", True, 1.20),  # 1.2x the no-model program
        rec("zero_shot_regions", "L1/b", True, 1.08),  # within 5%: neither
        rec("zero_shot_regions", "L2/c", True, 1.50),  # right where the rules were wrong
        rec("zero_shot_regions", "L3/e", True, 3.00),  # the no-model row has not finished it
        rec("zero_shot", "L1/a", True, 9.00),  # whole programs are not set against it
    ]
    (row,) = report.beside_no_model(records)
    assert row["config"] == "zero_shot_regions" and row["tasks"] == 3
    assert row["correct"] == [3, 2] and row["correct_only"] == [1, 0]
    assert row["faster_than_eager"] == [3, 1]
    assert (row["model_faster"], row["model_slower"]) == (1, 0)
    assert row["geomean_model_over_no_model"] == pytest.approx((1.2 * 1.08 / 1.1) ** 0.5)
    (line,) = report.beside_no_model_table([row])[2:]
    assert line.startswith("| zero_shot | 3 | 3 / 2 | 1 / 0 | 3 / 1 | 1 / 0 |")
    assert report.beside_no_model([r for r in records if r["config"] != "no_model_regions"]) == []
