"""benchmarks.arm_verdicts: an arm's verdicts back under its run's own job ids, copies included."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.arm_verdicts import for_arm, main


def _verdicts() -> list[dict]:
    return [
        {"job_id": "s:L2/A|A/r0s0/model", "verdict": "correct"},
        {"job_id": "s:L2/A|A/r0s0/rules", "verdict": "wrong_output"},
        {"job_id": "s:L2/B|B/r0s0/model", "verdict": "timeout"},
        {"job_id": "s:L2/B|B/r0s0/model", "verdict": "correct"},  # judged again: the last wins
    ]


def test_only_the_arms_verdicts_come_back_without_the_suffix_and_the_last_of_a_job_wins() -> None:
    back = for_arm(_verdicts(), "model")
    assert {v["job_id"]: v["verdict"] for v in back} == {
        "s:L2/A|A/r0s0": "correct",
        "s:L2/B|B/r0s0": "correct",
    }


def test_a_job_sent_once_for_two_arms_gives_the_copy_its_verdict() -> None:
    same = [{"s:L2/B|B/r0s0/rules": "s:L2/B|B/r0s0/model"}]
    back = {v["job_id"]: v for v in for_arm(_verdicts(), "rules", same)}
    assert back["s:L2/A|A/r0s0"]["verdict"] == "wrong_output"
    assert back["s:L2/B|B/r0s0"]["verdict"] == "correct"
    assert back["s:L2/B|B/r0s0"]["same_as"] == "s:L2/B|B/r0s0/model"


def test_the_cli_writes_what_run_py_resume_reads_and_refuses_an_arm_without_verdicts(tmp_path: Path) -> None:
    path = tmp_path / "v.jsonl"
    path.write_text("".join(json.dumps(v) + "\n" for v in _verdicts()))
    out = tmp_path / "run" / "verdicts.jsonl"
    assert main([str(path), "--arm", "model", "--out", str(out)]) == 0
    assert [json.loads(line)["job_id"] for line in out.read_text().splitlines()] == [
        "s:L2/A|A/r0s0",
        "s:L2/B|B/r0s0",
    ]
    assert main([str(path), "--arm", "old", "--out", str(tmp_path / "none.jsonl")]) == 2
    assert not (tmp_path / "none.jsonl").exists()
