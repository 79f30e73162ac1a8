"""The shared-30 rows: each task's default program (its ruled twin where one exists, a later run's where a
task was generated again), byte-identical programs judged once for every row, a verdict found by the
program's source in any run that judged it, counts from strict verdicts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.rows import digest, jobs, judged, markdown, programs_of, summarise


def _write(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _job(job_id: str, code: str) -> dict:
    return {"job_id": job_id, "code": code}


def test_each_row_takes_its_default_programs_and_identical_ones_are_judged_once(tmp_path: Path) -> None:
    model = _write(
        tmp_path / "model.jsonl",
        [
            _job("ir:L1/Mm|Mm/r0s0", "first mm"),
            _job("ir:L1/Mm|Mm/r0s0/ruled", "ruled mm"),
            _job("ir:L2/Conv|Conv/r0s0", "old conv"),
        ],
    )
    again = _write(tmp_path / "again.jsonl", [_job("ir:L2/Conv|Conv/r0s0", "new conv")])
    rules = _write(
        tmp_path / "rules.jsonl", [_job("zs:L1/Mm|Mm/r0s0", "ruled mm"), _job("zs:L2/Conv|Conv/r0s0", "x")]
    )
    sent, ids = jobs({"model": [model, again], "rules": [rules]})
    assert [j["code"] for j in sent] == ["ruled mm", "new conv", "x"]
    assert ids["model"] == {"L1/Mm": "ir:L1/Mm|Mm/r0s0/ruled", "L2/Conv": "ir:L2/Conv|Conv/r0s0"}
    assert ids["rules"] == {"L1/Mm": "ir:L1/Mm|Mm/r0s0/ruled", "L2/Conv": "zs:L2/Conv|Conv/r0s0"}

    def verdict(job_id: str, verdict: str, eager: float) -> dict:
        return {
            "job_id": job_id,
            "verdict": verdict,
            "counted": "strict",
            "speedup_eager": eager,
            "speedup_compile": eager / 2,
            "custom_kernel_share": 0.5,
        }

    earlier = _write(tmp_path / "earlier.jsonl", [_job("old:L2/Conv|Conv/r0s0", "new conv")])
    found = judged(
        [
            (
                programs_of(_write(tmp_path / "sent.jsonl", sent)),
                _write(tmp_path / "v.jsonl", [verdict(sent[0]["job_id"], "correct", 0.5)]),
            ),
            (
                programs_of(earlier),
                _write(tmp_path / "old.jsonl", [verdict("old:L2/Conv|Conv/r0s0", "correct", 2.0)]),
            ),
        ]
    )
    summary = summarise({j["job_id"]: digest(j) for j in sent}, found, ids)
    assert summary["counts"]["model"]["strict"] == 2 and summary["counts"]["model"]["faster_eager"] == 1
    assert summary["counts"]["model"]["faster_compile"] == 0
    assert summary["table"]["model"]["L2/Conv"]["run"] == "old.jsonl"  # the same bytes, judged earlier
    assert summary["counts"]["rules"]["judged"] == 1 and summary["counts"]["rules"]["strict"] == 1
    assert summary["table"]["rules"]["L2/Conv"]["verdict"] == "not judged"
    assert summary["identical_across_rows"] == 1
    assert "| L1/Mm | correct | 0.50x | 0.25x | 0.50 | v.jsonl |" in markdown(summary, "a GPU")


def test_a_share_of_zero_counts_in_the_levels_median() -> None:
    """A candidate whose kernels carry none of its GPU time is a share of 0.0, not a missing one."""
    ids = {"model": {"L3/A": "a", "L3/B": "b", "L3/C": "c"}}
    shares = {"a": 0.0, "b": 0.0, "c": 0.9}
    found = {
        job: (
            {"verdict": "correct", "counted": "strict", "speedup_eager": 1.0, "custom_kernel_share": s},
            "v",
        )
        for job, s in shares.items()
    }
    summary = summarise({job: job for job in shares}, found, ids)
    assert summary["counts"]["model"]["share_by_level"]["L3"] == 0.0


def test_the_ceiling_is_the_speedup_with_the_custom_kernels_free() -> None:
    """1.2x eager with its kernels at a fifth of the GPU time could reach 1.5x; a candidate whose kernels
    carry all of it has no ceiling PyTorch sets."""
    ids = {"model": {"L2/A": "a", "L2/B": "b"}}
    cells = {"a": (1.2, 0.2), "b": (0.5, 1.0)}
    found = {
        job: (
            {"verdict": "correct", "counted": "strict", "speedup_eager": x, "custom_kernel_share": s},
            "v",
        )
        for job, (x, s) in cells.items()
    }
    summary = summarise({job: job for job in cells}, found, ids)
    assert summary["counts"]["model"]["ceiling_by_level"]["L2"] == pytest.approx(1.5)
    assert "if those kernels took no time (the rest is PyTorch's): L2 1.50x" in markdown(summary, "a GPU")


def test_a_report_regenerates_from_what_it_wrote_once_the_job_files_are_gone(tmp_path: Path) -> None:
    """report --out writes the rows' program hashes and each verdicts file's judged hashes; a second report
    from those alone (the jobs files deleted) is the same table."""
    from benchmarks.rows import main

    sent = _write(tmp_path / "rows.jsonl", [_job("ir:L2/A|A/r0s0", "a"), _job("ir:L3/B|B/r0s0", "b")])
    (tmp_path / "rows.ids.json").write_text(
        json.dumps({"model": {"L2/A": "ir:L2/A|A/r0s0", "L3/B": "ir:L3/B|B/r0s0"}})
    )
    run = _write(tmp_path / "run.jsonl", [_job("run:L2/A|A/r0s0", "a")])  # the same program, judged earlier
    judged_in = _write(
        tmp_path / "run.verdicts.jsonl",
        [{"job_id": "run:L2/A|A/r0s0", "verdict": "correct", "counted": "strict", "speedup_eager": 1.5}],
    )
    first, second = tmp_path / "first", tmp_path / "second"
    assert main(["report", "--rows", str(sent), "--judged", f"{run}={judged_in}", "--out", str(first)]) == 0
    sent.unlink()
    run.unlink()
    again = ["report", "--rows", str(first / "programs.json"), "--ids", str(first / "rows.ids.json")]
    assert main([*again, "--judged-from", str(first / "judged.json"), "--out", str(second)]) == 0
    assert (second / "summary.md").read_text() == (first / "summary.md").read_text()
    assert "| L2/A | correct | 1.50x |" in (second / "summary.md").read_text()
    assert "| L3/B | not judged |" in (second / "summary.md").read_text()
