"""benchmarks.arms: an A/B run's verdicts, read back per task and arm."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import arms


def _verdict(
    job_id: str,
    verdict: str = "correct",
    eager: float = 1.0,
    compile_: float = 1.0,
    ms: float = 1.0,
    share: float | None = None,
) -> dict:
    counted = "strict" if verdict == "correct" else None
    return {
        "job_id": job_id,
        "verdict": verdict,
        "counted": counted,
        "correct_strict": verdict == "correct",  # as the evaluator writes it (select ranks by it)
        "speedup_eager": eager,
        "speedup_compile": compile_,
        "custom_kernel_share": share,
        "evidence": {"gpu": "NVIDIA H100 80GB HBM3", "timing": {"candidate": {"ms": ms}}},
    }


def test_each_task_gets_a_cell_per_arm_and_the_geomean_compares_tasks_every_arm_got_right(
    tmp_path: Path, capsys
) -> None:  # noqa: ANN001
    lines = [
        _verdict("zero_shot:L1/Sum|Sum/r0s0/old", eager=0.5, ms=0.3),
        _verdict("zero_shot:L1/Sum|Sum/r0s0/new", eager=2.0, compile_=1.5, ms=0.1, share=0.9),
        _verdict("zero_shot:L1/Scan|Scan/r0s0/old", eager=1.2),
        _verdict("zero_shot:L1/Scan|Scan/r0s0/new", verdict="wrong_output", eager=9.0, share=0.1),
        _verdict("zero_shot:L1/Only|Only/r0s0/new", eager=1.1, share=0.5),
        _verdict("zero_shot:L1/Sum|Sum/r0s0/other", eager=7.0),  # an arm not asked for
    ]
    path = tmp_path / "v.jsonl"
    path.write_text("".join(json.dumps(v) + "\n" for v in lines))
    assert arms.main([str(path), "--arms", "old,new", "--out", str(tmp_path / "out")]) == 0
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["tasks_every_arm_got_right"] == 1
    assert summary["old"] == {
        "tasks": 2,
        "strict": 2,
        "faster_eager": 1,
        "faster_compile": 0,
        "geomean_eager_common": 0.5,
        "time_old_over_this": 1.0,
        "mean_share": None,  # no verdict of the arm says its share
    }
    assert summary["new"]["strict"] == 2 and summary["new"]["faster_eager"] == 2
    assert summary["new"]["geomean_eager_common"] == 2.0  # the wrong Scan's 9x counts nowhere
    assert round(summary["new"]["time_old_over_this"], 9) == 3.0  # its own 0.1 ms against the old arm's 0.3
    assert summary["new"]["mean_share"] == 0.7  # the strict cells' shares: the wrong Scan's 0.1 left out
    text = capsys.readouterr().out
    assert "| L1/Only | - | - | - | - | - | correct | 1.10x | 1.00x | 1 | 0.50 |" in text
    assert "| L1/Scan | correct | 1.20x | 1.00x | 1 | - | wrong_output | - | - | - | - |" in text
    assert "custom kernels' mean share of its GPU time 0.70" in text
    assert "the candidates' own times, old's over new's: 3.00x" in text
    assert "NVIDIA H100 80GB HBM3" in text


def test_tasks_selects_a_level_of_the_run(tmp_path: Path) -> None:
    lines = [
        _verdict("zero_shot:L1/Sum|Sum/r0s0/old", eager=0.5),
        _verdict("zero_shot:L1/Sum|Sum/r0s0/new", eager=2.0),
        _verdict("zero_shot:L2/Fused|Fused/r0s0/new", eager=9.0),
    ]
    path = tmp_path / "v.jsonl"
    path.write_text("".join(json.dumps(v) + "\n" for v in lines))
    out = tmp_path / "out"
    assert arms.main([str(path), "--arms", "old,new", "--tasks", "L1/", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert list(summary["rows"]) == ["L1/Sum"] and summary["new"]["tasks"] == 1


def test_an_arm_with_several_candidates_of_a_task_keeps_the_faster_strictly_correct_one(
    tmp_path: Path, capsys
) -> None:  # noqa: ANN001
    """autotune's two cuts (or n samples) in one arm: the cell is the one the graph's select keeps."""
    lines = [
        _verdict("zero_shot:L2/Fused|Fused/r0s0/auto", eager=0.8),
        _verdict("zero_shot:L2/Fused|Fused/r0s0-moderate/auto", eager=1.3),
        _verdict(
            "zero_shot:L2/Fused|Fused/r0s0-moderate/auto", verdict="wrong_output", eager=1.3
        ),  # judged again
        _verdict("zero_shot:L2/Other|Other/r0s0/auto", eager=1.6),
        _verdict("zero_shot:L2/Other|Other/r0s0-moderate/auto", verdict="wrong_output", eager=9.0),
        _verdict("zero_shot:L2/Fused|Fused/r0s0/rules", eager=0.9),
    ]
    path = tmp_path / "v.jsonl"
    path.write_text("".join(json.dumps(v) + "\n" for v in lines))
    out = tmp_path / "out"
    assert arms.main([str(path), "--arms", "auto,rules", "--out", str(out)]) == 0
    rows = json.loads((out / "summary.json").read_text())["rows"]
    assert rows["L2/Fused"]["auto"]["eager"] == 0.8 and rows["L2/Fused"]["auto"]["kept"] == "r0s0"
    assert rows["L2/Other"]["auto"]["eager"] == 1.6 and rows["L2/Other"]["auto"]["kept"] == "r0s0"
    assert "kept" not in rows["L2/Fused"]["rules"]
    assert "| L2/Fused | correct (r0s0) | 0.80x |" in capsys.readouterr().out


def test_by_cut_makes_each_autotune_cut_an_arm_of_its_own(tmp_path: Path) -> None:
    lines = [
        _verdict("zero_shot:L2/Fused|Fused/r0s0/auto", eager=0.8),
        _verdict("zero_shot:L2/Fused|Fused/r0s0-moderate/auto", eager=1.3),
        _verdict("zero_shot:L1/Mm|Mm/r0s0/auto", eager=0.6),  # one cut: both offered the same regions
    ]
    path = tmp_path / "v.jsonl"
    path.write_text("".join(json.dumps(v) + "\n" for v in lines))
    out = tmp_path / "out"
    assert (
        arms.main([str(path), "--arms", "auto.aggressive,auto.moderate", "--by-cut", "--out", str(out)]) == 0
    )
    rows = json.loads((out / "summary.json").read_text())["rows"]
    assert (
        rows["L2/Fused"]["auto.aggressive"]["eager"] == 0.8
        and rows["L2/Fused"]["auto.moderate"]["eager"] == 1.3
    )
    assert set(rows["L1/Mm"]) == {"auto.aggressive"}


def test_by_round_makes_each_round_an_arm_and_the_plain_arm_keeps_the_best_of_them(tmp_path: Path) -> None:
    lines = [
        _verdict("iterative_refinement:L2/Fused|Fused/r0s0-moderate/auto", eager=1.2, ms=2.0),
        _verdict("iterative_refinement:L2/Fused|Fused/r1s0-moderate/auto", eager=1.5, ms=1.6),
        _verdict("iterative_refinement:L1/Mm|Mm/r0s0/auto", eager=0.6),
        _verdict("iterative_refinement:L1/Mm|Mm/r1s0/auto", verdict="wrong_output", eager=0.9),
    ]
    path = tmp_path / "v.jsonl"
    path.write_text("".join(json.dumps(v) + "\n" for v in lines))
    out = tmp_path / "out"
    assert arms.main([str(path), "--arms", "auto.r0,auto.r1", "--by-round", "--out", str(out)]) == 0
    rows = json.loads((out / "summary.json").read_text())["rows"]
    assert rows["L2/Fused"]["auto.r0"]["eager"] == 1.2 and rows["L2/Fused"]["auto.r1"]["eager"] == 1.5
    assert rows["L1/Mm"]["auto.r1"]["verdict"] == "wrong_output"
    assert arms.main([str(path), "--arms", "auto", "--out", str(out)]) == 0
    rows = json.loads((out / "summary.json").read_text())["rows"]
    assert rows["L2/Fused"]["auto"]["kept"] == "r1s0-moderate"  # faster, strictly correct
    assert rows["L1/Mm"]["auto"]["kept"] == "r0s0"  # the faster round-1 answer is wrong
