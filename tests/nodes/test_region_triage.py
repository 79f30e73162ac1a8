"""Region triage: each region's route comes off the GPU verdict, without a model call."""

from __future__ import annotations

from typing import Any

from evaluator.verdict import RegionCheck, make, region_check
from nodes.region_triage import region_routes


def _last(kind: str, checks: list[RegionCheck], log: str = "", **measured: Any) -> dict[str, Any]:
    verdict = make(kind, log_tail=log, **measured)
    verdict["evidence"] = {"regions": checks}
    return {
        "format": "regions",
        "bodies": {"r1": "float t1 = x;", "r2": "result = 0.0f;"},
        "region_ops": {"r1": ["torch.relu"], "r2": ["torch.sum"]},
        "costliest": "r2",
        "verdict": verdict,
    }


def test_a_wrong_region_gets_its_element_and_op_and_a_right_one_is_kept() -> None:
    checks = [
        region_check("r1", {"ok": True}),
        region_check("r2", {"ok": False, "reason": "values", "first_mismatch_index": [0, 3], "mismatches": 5,
                            "numel": 8, "first_mismatch": {"expected": 2.0, "got": 0.0}}),
    ]
    routes = region_routes(_last("wrong_output", checks))
    assert routes["r1"] == {"route": "keep", "text": ""}
    assert routes["r2"]["route"] == "values"
    text = routes["r2"]["text"]
    assert "out[0, 3] = 0 where PyTorch gives 2" in text and "torch.sum" in text


def test_a_fault_names_the_index_bound_and_a_compile_error_is_repaired_locally() -> None:
    fault = region_routes(_last("runtime_error", [], log="CUDA error: an illegal memory access"))
    assert {r["route"] for r in fault.values()} == {"fault"}
    assert "[0, R)" in fault["r1"]["text"] and "illegal memory access" in fault["r1"]["text"]
    compiled = region_routes(_last("compile_error", [], log="region_r1.cu(9): error: identifier \"y\""))
    assert compiled["r1"]["route"] == "compile" and "identifier" in compiled["r1"]["text"]


def test_a_strictly_correct_candidate_offers_its_costliest_region_for_a_fast_second() -> None:
    last = _last("correct", [region_check("r1", {"ok": True}), region_check("r2", {"ok": True})],
                 speedup_eager=0.25)
    last["verdict"]["evidence"]["timing"] = {"candidate": {"ms": 4.0}, "reference_eager": {"ms": 1.0}}
    routes = region_routes(last)
    assert routes["r1"]["route"] == "keep" and routes["r2"]["route"] == "optimise"
    assert "4 ms per call, where PyTorch takes 1 ms (0.25x)" in routes["r2"]["text"]
