"""One ranking: the graph's select node and the live view rank candidates by evaluator.verdict's key.

(Here, not beside the verdict's tests: those run on the GPU host, which has no langgraph.)"""

from __future__ import annotations

from evaluator.verdict import best, make
from graph.runner.progress import ProgressView
from nodes.select import best_of


def test_selection_and_live_view_agree_on_the_best() -> None:
    """One ranking: the graph's select node and the live view pick the same candidate."""
    pool = [
        {"id": "a", "verdict": make("wrong_output")},
        {"id": "b", "verdict": make("compile_error")},
        {"id": "c", "verdict": make("runtime_error")},
    ]
    view = ProgressView([("t", "s")], live=False)
    view.console.quiet = True
    view.update("t", "s", "evaluate", {"candidates": pool}, [])
    assert best_of(pool)["id"] == "a"
    assert view.rows[("t", "s")].best is pool[0]["verdict"]
    assert best(pool, lambda c: c["verdict"]) is pool[0]
