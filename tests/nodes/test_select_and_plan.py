"""Selection order, plan parsing and the retrieval query: the small pure pieces the graphs rely on."""

from __future__ import annotations

from nodes.analysis import parse_plan
from nodes.retrieval import plan_query
from nodes.select import best_of


def cand(
    cid: str,
    kind: str,
    strict: bool = False,
    loose: bool = False,
    speed: float | None = None,
    compiled: bool = False,
) -> dict[str, object]:
    return {
        "id": cid,
        "verdict": {
            "verdict": kind,
            "correct_strict": strict,
            "correct_kernelbench": loose,
            "speedup_eager": speed,
            "compiled": compiled,
        },
    }


def test_best_is_correct_first_then_speedup_then_progress_then_earliest() -> None:
    pool = [
        cand("a", "compile_error"),
        cand("b", "wrong_output", compiled=True),
        cand("c", "correct", loose=True, speed=5.0, compiled=True),
        cand("d", "correct", strict=True, loose=True, speed=1.1, compiled=True),
        cand("e", "correct", strict=True, loose=True, speed=1.1, compiled=True),
    ]
    assert best_of(pool)["id"] == "d"
    assert best_of(pool[:3])["id"] == "c"
    assert best_of(pool[:2])["id"] == "b"
    assert best_of([]) is None


def test_parse_plan_keeps_valid_ops_and_marks_garbage() -> None:
    plan = parse_plan(
        '{"summary": "fuse", "ops": [{"op": "relu", "action": "fuse", "category": "activation"},'
        ' {"op": "broken"}]}'
    )
    assert plan == {
        "summary": "fuse",
        "ops": [{"op": "relu", "action": "fuse", "category": "activation"}],
        "valid": True,
    }
    assert parse_plan("not json")["valid"] is False


def test_plan_query_uses_changed_ops_and_their_category() -> None:
    state = {
        "task": {"name": "Gemm_Relu"},
        "plan": {
            "summary": "fuse relu into gemm epilogue",
            "ops": [
                {"op": "matmul", "action": "keep", "category": "gemm"},
                {"op": "relu", "action": "fuse", "category": "fused_epilogue"},
            ],
        },
    }
    query, category = plan_query(state)
    assert "relu fused_epilogue" in query and "matmul" not in query and category == "fused_epilogue"
    assert plan_query({"task": {"name": "Gemm_Relu"}}) == ("Gemm Relu", None)
