"""The GPU summary of the loop kinds: a later verdict file replaces an earlier one for the same job; a task is
repaired when a later round is strictly correct after a wrong first round; a first round judged again starts
a new run and the old one stays in the record; refused first answers come from the runs' traces."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.kinds_summary import main


def _write(path: Path, rows: list[tuple[str, str, bool]]) -> None:
    lines = [{"job_id": job, "verdict": verdict, "correct_strict": ok} for job, verdict, ok in rows]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_later_calls_replace_earlier_verdicts_and_repairs_are_counted(tmp_path: Path) -> None:
    ir = "iterative_refinement:L1/Pool|Pool/r{}s0"
    _write(
        tmp_path / "1_families.verdicts.jsonl",
        [(ir.format(0), "runtime_error", False), ("zero_shot:L2/Scan|Scan/r0s0", "correct", True)],
    )
    _write(  # the same first round judged again after a fix, then its repair
        tmp_path / "2_families.verdicts.jsonl",
        [(ir.format(0), "wrong_output", False), (ir.format(1), "correct", True)],
    )
    net = ("profiling_guided:L3/Net|Net/r0s0", "wrong_output", False)
    _write(tmp_path / "2_shared.verdicts.jsonl", [net])
    assert main(["--dir", str(tmp_path)]) == 0
    text = (tmp_path / "summary.md").read_text()
    first, second = "1_families.verdicts.jsonl", "2_families.verdicts.jsonl"
    assert f"| families | L1/Pool | {first} | runtime_error | - | - | - (not run further) |" in text
    assert f"| families | L1/Pool | {second} | wrong_output | correct | - | yes |" in text
    assert "Repaired: 1 of the 1 wrong first-round bodies whose later rounds were judged (1 more" in text
    assert "| no model (the framework's rules), moderate | all | 1 | 1 | 1 | - |" in text  # no speedup given
    assert "| 1.5B, profiling-guided (greedy, conservative) | L3 | 1 | 0 | 0 | - |" in text


def test_first_answers_the_local_checks_refused_are_read_from_the_trace(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    node = {"kind": "node", "node": "generate", "task": "L1/Loss", "strategy": "iterative_refinement"}
    trace = [
        {**node, "round": 0, "sample": 0, "outputs": {"answers": {"r0": 1, "r1": 3}, "errors": {}}},
        {**node, "round": 1, "sample": 0, "outputs": {"answers": {"r1": 2}, "errors": {}}},
        {
            **node,
            "task": "L1/Scan",
            "round": 0,
            "sample": 0,
            "outputs": {"answers": {"r0": 3}, "errors": {"r0": "nvrtc"}},
        },
    ]
    (run / "trace.jsonl").write_text("".join(json.dumps(e) + "\n" for e in trace))
    loss, scan = "iterative_refinement:L1/Loss|Loss/r0s0", "iterative_refinement:L1/Scan|Scan/r0s0"
    _write(tmp_path / "1_families.verdicts.jsonl", [(loss, "correct", True), (scan, "compile_error", False)])
    answers = tmp_path / "1_families.answers.jsonl"
    assert main(["--dir", str(tmp_path), "--answers", str(run), "--into", str(answers)]) == 0
    text = (tmp_path / "summary.md").read_text()
    assert "| families | L1/Loss | r1 | 3 | yes | correct |" in text
    assert "| families | L1/Scan | r0 | 3 | no | compile_error |" in text
    assert "L1/Loss | r0 |" not in text  # its first answer passed
    assert "Repaired before the GPU: 1 of the 2 first answers" in text
