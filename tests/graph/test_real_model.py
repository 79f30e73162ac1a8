"""Each strategy end to end with the REAL embedded model on the CPU and the `cpu` backend (slow, CI).

The model is whatever it is: these tests check that every strategy completes on a demo task and records
real evaluator verdicts and a full trace, not that the 1.5B model succeeds. Short completions, n=1, k<=2.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from evaluator.verdict import VERDICTS
from graph import compile_graph
from graph.demo_tasks import DEMO_LEVEL, demo_paths
from nodes.context import Context

pytestmark = pytest.mark.slow

# Few timing trials: these tests record verdicts, they do not benchmark.
EVAL = {"timing_trials": 5, "warmup": 1, "reference_compile": "off"}


@pytest.fixture(scope="module")
def real_model() -> None:
    from nodes.model import llm
    from nodes.model.store import ModelStoreError, embedded_model_path

    try:
        embedded_model_path()
    except ModelStoreError as exc:
        pytest.skip(f"embedded model not set up (run kernelgraph-setup): {exc}")
    llm.configure_model(n_ctx=8192)


def demo_task(number: int) -> dict[str, Any]:
    path = next(p for p in demo_paths() if p.name.startswith(f"{number}_"))
    return {"name": path.stem.split("_", 1)[1], "level": DEMO_LEVEL, "problem_id": number,
            "source": path.read_text()}


def check_run(out: dict[str, Any], rounds: int) -> None:
    """Real verdicts on every candidate, a best one, and trace events with real prompts and completions."""
    assert 1 <= len(out["candidates"]) <= rounds
    for candidate in out["candidates"]:
        verdict = candidate["verdict"]
        assert verdict["verdict"] in VERDICTS
        assert isinstance(verdict["compiled"], bool) and "log_tail" in verdict
        assert candidate["completion_tokens"] > 0
    assert out["best"] in out["candidates"]
    generated = [e for e in out["events"] if e["node"] == "generate"]
    assert len(generated) == len(out["candidates"])
    assert all(e["messages"] and e["completion"] and e["prompt_tokens"] > 0 for e in generated)
    assert out["events"][-1]["node"] == "select"
    json.dumps(out)
    summary = [(c["id"], c["verdict"]["verdict"], c["verdict"]["speedup_eager"]) for c in out["candidates"]]
    print(f"verdicts: {summary}; model seconds: {sum(e['seconds'] for e in generated):.0f}")


@pytest.mark.parametrize("strategy,task,rounds", [
    ("zero_shot", 1, 1),
    ("profiling_guided", 2, 1),
    ("iterative_refinement", 1, 2),
    ("agent", 1, 1),
])
def test_strategy_completes_with_real_verdicts(real_model: None, strategy: str, task: int, rounds: int
                                              ) -> None:
    ctx = Context(backend="cpu", samples=1, rounds=rounds, max_tokens=800, ambition="conservative",
                  temperature=0.2, seed=7, retrieval_k=1, stop_on="correct", replans=0,
                  eval_overrides=EVAL)
    out = compile_graph(strategy).invoke({"task": demo_task(task)}, context=ctx)
    check_run(out, rounds)
    nodes = {e["node"] for e in out["events"]}
    if strategy == "profiling_guided":
        assert out["profile"]["text"], out["profile"].get("error")
        assert out["profile"]["text"].strip()[:40] in out["events"][1]["messages"][-1]["content"]
    if strategy == "agent":
        assert {"analysis", "retrieval"} <= nodes and out["plan"]["valid"]
    if len(out["candidates"]) == 2:
        assert "triage" in nodes
