"""benchmarks.arm_jobs: deferred runs' jobs in one file, each id ending in its arm, as benchmarks.arms
reads the verdicts back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.arm_jobs import main, pack
from benchmarks.arms import by_arm
from benchmarks.arms import main as arms_main


def _run(root: Path, name: str, ids: list[str]) -> Path:
    run = root / name
    run.mkdir()
    (run / "jobs.jsonl").write_text("".join(json.dumps({"job_id": i, "code": name}) + "\n" for i in ids))
    return run


def test_each_runs_jobs_end_in_its_arm_and_the_config_sits_beside_them(tmp_path: Path) -> None:
    old, new = _run(tmp_path, "old", ["t1/r0s0", "t2/r0s0"]), _run(tmp_path, "new", ["t1/r0s0"])
    out = tmp_path / "kinds" / "ab.jsonl"
    assert pack([(old, "old"), (new, "new")], out, '{"reference_compile": "off"}') == 3
    jobs = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(j["job_id"], j["code"]) for j in jobs] == [
        ("t1/r0s0/old", "old"),
        ("t2/r0s0/old", "old"),
        ("t1/r0s0/new", "new"),
    ]
    assert json.loads((tmp_path / "kinds" / "ab.config").read_text()) == {"reference_compile": "off"}
    verdicts = [{"job_id": j["job_id"], "verdict": "correct"} for j in jobs]
    assert set(by_arm(verdicts, ["old", "new"])["t1/r0s0"]) == {"old", "new"}  # arms reads them back


def test_bad_runs_arms_and_configs_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    run = _run(tmp_path, "run", ["t1"])
    out = tmp_path / "ab.jsonl"
    with pytest.raises(ValueError, match="no jobs.jsonl"):
        pack([(tmp_path / "missing", "a")], out)
    with pytest.raises(ValueError, match="plain job-id suffix"):
        pack([(run, "a/b")], out)
    with pytest.raises(ValueError, match="twice"):
        pack([(run, "a"), (run, "a")], out)
    (tmp_path / "bare").mkdir()
    (tmp_path / "bare" / "jobs.jsonl").write_text('{"code": "x"}\n')
    with pytest.raises(ValueError, match="without a job_id"):
        pack([(tmp_path / "bare", "a")], out)
    with pytest.raises(json.JSONDecodeError):
        pack([(run, "a")], out, "{reference_compile: off}")
    assert not out.exists()
    assert main([f"{run}:a", "--out", str(out)]) == 0 and out.exists()
    assert main([f"{tmp_path / 'missing'}:a", "--out", str(out)]) == 2


def test_once_packs_a_shared_program_once_and_arms_gives_each_copy_its_verdict(tmp_path: Path) -> None:
    def run(name: str, codes: list[str]) -> Path:
        (tmp_path / name).mkdir()
        jobs = [{"job_id": f"t{i}/r0s0", "task": f"t{i}", "code": c} for i, c in enumerate(codes, 1)]
        (tmp_path / name / "jobs.jsonl").write_text("".join(json.dumps(j) + "\n" for j in jobs))
        return tmp_path / name

    model, rules = run("model", ["a", "b"]), run("rules", ["a", "x"])
    out = tmp_path / "ab.jsonl"
    assert pack([(model, "model"), (rules, "rules")], out, once=True) == 3
    assert [json.loads(line)["job_id"] for line in out.read_text().splitlines()] == [
        "t1/r0s0/model",
        "t2/r0s0/model",
        "t2/r0s0/rules",
    ]
    same = json.loads(out.with_suffix(".same.json").read_text())
    assert same == {"t1/r0s0/rules": "t1/r0s0/model"}
    verdicts = [
        {
            "job_id": "t1/r0s0/model",
            "verdict": "correct",
            "counted": "strict",
            "correct_strict": True,
            "speedup_eager": 1.5,
        }
    ]
    (tmp_path / "v.jsonl").write_text(json.dumps(verdicts[0]) + "\n")
    summary = tmp_path / "summary"
    assert (
        arms_main(
            [
                str(tmp_path / "v.jsonl"),
                "--arms",
                "model,rules",
                "--same",
                str(out.with_suffix(".same.json")),
                "--out",
                str(summary),
            ]
        )
        == 0
    )
    rows = json.loads((summary / "summary.json").read_text())["rows"]
    assert rows["t1/r0s0"]["rules"]["eager"] == 1.5 and "t2/r0s0" not in rows  # t2 was never judged


def test_kept_sends_only_the_candidate_select_keeps_of_each_task_and_arm(tmp_path: Path) -> None:
    ids = ["L2/A|A/r0s0", "L2/A|A/r0s0-moderate", "L2/B|B/r0s0", "L2/B|B/r0s0-moderate"]
    model, rules = _run(tmp_path, "model", ids), _run(tmp_path, "rules", ids)

    def verdict(job_id: str, eager: float, strict: bool = True) -> dict:
        return {
            "job_id": job_id,
            "verdict": "correct" if strict else "wrong_output",
            "correct_strict": strict,
            "speedup_eager": eager,
        }

    earlier = tmp_path / "earlier.jsonl"
    earlier.write_text(
        "".join(
            json.dumps(v) + "\n"
            for v in [
                verdict("L2/A|A/r0s0/model", 0.8),
                verdict("L2/A|A/r0s0-moderate/model", 1.2),
                verdict("L2/B|B/r0s0/model", 1.9),
                verdict("L2/B|B/r0s0-moderate/model", 2.5, strict=False),  # faster but wrong
                verdict("L2/A|A/r0s0/rules", 1.1),
                verdict("L2/A|A/r0s0-moderate/rules", 1.0),
            ]
        )
    )
    out = tmp_path / "kept.jsonl"
    assert main([f"{model}:model", f"{rules}:rules", "--out", str(out), "--kept", str(earlier)]) == 0
    assert [json.loads(line)["job_id"] for line in out.read_text().splitlines()] == [
        "L2/A|A/r0s0-moderate/model",
        "L2/B|B/r0s0/model",  # its faster moderate cut was wrong
        "L2/A|A/r0s0/rules",  # rules' B had no verdict: not sent
    ]
    other = _run(tmp_path, "other", ["L3/C|C/r0s0"])
    with pytest.raises(ValueError, match="keep none of its jobs"):
        pack([(other, "model")], out, only={"L2/A|A/r0s0-moderate/model"})
