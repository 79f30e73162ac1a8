"""The live view: node, tokens/s and the best verdict so far per task and strategy."""

from __future__ import annotations

import io

from rich.console import Console

from graph.runner.progress import ProgressView, describe_verdict


def _update(verdict: dict) -> dict:
    return {"candidates": [{"id": "r0s0", "verdict": verdict}]}


def test_rows_track_node_rate_and_best_verdict() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=160)
    with ProgressView([("L0/Small_MLP", "agent")], console=console, live=True) as view:
        view.status("L0/Small_MLP", "agent", "running")
        view.node_started("L0/Small_MLP", "agent", "generate")
        view.update("L0/Small_MLP", "agent", "generate", {}, [{"completion_tokens": 44, "seconds": 2.0}])
        view.update("L0/Small_MLP", "agent", "evaluate", _update({"verdict": "compile_error"}), [])
        view.update(
            "L0/Small_MLP",
            "agent",
            "evaluate",
            _update({"verdict": "correct", "correct_strict": True, "speedup_eager": 1.31}),
            [],
        )
        view.update(
            "L0/Small_MLP", "agent", "evaluate", _update({"verdict": "wrong_output", "compiled": True}), []
        )
        row = view.rows[("L0/Small_MLP", "agent")]
        assert row.tokens_per_s == 22.0 and row.candidates == 3 and row.node == "evaluate"
        assert describe_verdict(row.best) == "correct 1.31x"
    text = out.getvalue()
    assert "L0/Small_MLP" in text and "correct 1.31x" in text and "22.0" in text


def test_plain_lines_when_not_a_terminal() -> None:
    out = io.StringIO()
    with ProgressView([("L1/MLP", "zero_shot")], console=Console(file=out, width=160), live=None) as view:
        view.status("L1/MLP", "zero_shot", "running")
        view.update(
            "L1/MLP",
            "zero_shot",
            "evaluate",
            _update({"verdict": "correct", "correct_kernelbench": True, "speedup_eager": 0.9}),
            [],
        )
    lines = out.getvalue().splitlines()
    assert lines == [
        "[zero_shot L1/MLP] running best: -",
        "[zero_shot L1/MLP] evaluate done best: correct (KB only) 0.90x",
    ]
