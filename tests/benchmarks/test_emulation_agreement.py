"""The emulation-agreement replay: a run's checkpointed candidates, their GPU verdicts (resumed in, or from a
verdict file of jobs left pending) and each candidate's bodies emulated on the CPU (real worker builds)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.sqlite import SqliteSaver

from benchmarks.emulation_agreement import main
from graph.runner.jsonl import read_jsonl

TASK = Path(__file__).resolve().parents[2] / "graph" / "demo_tasks" / "1_Scaled_LeakyReLU_Shift.py"
RIGHT = "float t1 = kg_leaky_relu(x, 0.05f);\nfloat t2 = t1 * 1.5f;\nfloat t3 = t2 + -0.25f;"
WRONG = RIGHT.replace("* 1.5f", "* 2.5f")


def _candidate(cid: str, body: str, verdict: str | None) -> dict[str, Any]:
    found = {"verdict": {"verdict": verdict, "correct_strict": verdict == "correct"}} if verdict else {}
    return {"id": cid, "format": "regions", "bodies": {"r0": body}, "shapes": {}, **found}


def _run(folder: Path, thread: str, state: dict[str, Any]) -> None:
    """A run directory as the runner leaves it: run.json and one thread's latest checkpoint."""
    folder.mkdir()
    (folder / "run.json").write_text(json.dumps({"context_fields": {"ambition": "moderate"}}))
    conn = sqlite3.connect(folder / "checkpoints.sqlite", check_same_thread=False)
    saver = SqliteSaver(conn)
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = state
    saver.put({"configurable": {"thread_id": thread, "checkpoint_ns": ""}}, checkpoint, {}, {})
    conn.close()


def test_agreement_counts_right_wrong_and_false_alarms(tmp_path: Path) -> None:
    task = {"name": "Scaled_LeakyReLU_Shift", "source": TASK.read_text()}
    thread = "zero_shot:L1/Scaled_LeakyReLU_Shift"
    state = {
        "task": task,
        "candidates": [
            _candidate("r0s0", RIGHT, "correct"),
            _candidate("r1s0", WRONG, "wrong_output"),
            _candidate("r2s0", WRONG, "correct"),  # a GPU verdict the CPU disputes: a false alarm
            _candidate("r3s0", RIGHT, "compile_error"),  # NVRTC's business, left out
        ],
        "pending": [_candidate("r4s0", RIGHT, None), _candidate("r5s0", RIGHT, None)],
    }
    _run(tmp_path / "run", thread, state)
    verdicts = tmp_path / "v.jsonl"
    verdicts.write_text(json.dumps({"job_id": f"{thread}|Scaled_LeakyReLU_Shift/r4s0", "verdict": "correct"}))
    out = tmp_path / "agreement.json"
    assert main([f"{tmp_path / 'run'}={verdicts}", "--out", str(out)]) == 0
    summary = json.loads(out.read_text())
    expected = {"cpu right, gpu correct": 2, "cpu wrong, gpu wrong": 1, "cpu wrong, gpu correct": 1}
    assert summary["total"] == expected
    assert summary["false_alarms"] == 1 and summary["emulated"] == 4 and summary["agreement"] == 0.75
    rows = read_jsonl(out.with_suffix(".jsonl"))
    assert [r["candidate"] for r in rows] == ["r0s0", "r1s0", "r2s0", "r4s0"]  # r5s0 was never judged
    assert rows[1]["cpu_error"].startswith("r0: out[")


def test_an_autotuned_run_emulates_each_candidate_at_its_own_cut(tmp_path: Path) -> None:
    """autotune judges both cuts; each candidate names its own, which is what its bodies were written on."""
    task = {"name": "Scaled_LeakyReLU_Shift", "source": TASK.read_text()}
    thread = "zero_shot:L1/Scaled_LeakyReLU_Shift"
    cut = {"ambition": "moderate"}
    state = {"task": task, "candidates": [_candidate("r0s0", RIGHT, "correct") | cut]}
    _run(tmp_path / "run", thread, state)
    settings = tmp_path / "run" / "run.json"
    settings.write_text(json.dumps({"context_fields": {"ambition": "autotune"}}))
    out = tmp_path / "agreement.json"
    assert main([str(tmp_path / "run"), "--out", str(out)]) == 0
    assert json.loads(out.read_text())["total"] == {"cpu right, gpu correct": 1}
