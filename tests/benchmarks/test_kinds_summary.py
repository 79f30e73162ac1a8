"""The GPU summary of the loop kinds: a later verdict file replaces an earlier one for the same job; a task is
repaired when a later round is strictly correct after a wrong first round."""

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
    assert "| families | L1/Pool | wrong_output | correct | - | yes |" in text
    assert "Repaired: 1 of the 1 first-round bodies that were wrong." in text
    assert "| no model (the framework's rules), moderate | all | 1 | 1 | 1 | - |" in text  # no speedup given
    assert "| 1.5B, profiling-guided (greedy, conservative) | L3 | 1 | 0 | 0 | - |" in text
