"""The one verdict shape: construction, the summary results files keep, and the one ranking."""

from __future__ import annotations

import pytest
import torch

from evaluator.harness import compare
from evaluator.verdict import (
    SUMMARY_FIELDS,
    VERDICTS,
    RegionCheck,
    Verdict,
    make,
    missing,
    rank,
    region_check,
    summary,
)


def test_make_fills_every_field_and_derives_correct_and_compiled() -> None:
    v = make("static_reject", kernelbench="correct", speedup_eager=0.99, custom_kernel_share=0.0)
    assert set(v) == set(Verdict.__annotations__)
    assert (v["correct_strict"], v["correct_kernelbench"], v["compiled"]) == (False, True, True)
    assert v["counted"] == "strict" and v["verdict_kernelbench"] == "correct"
    assert make("compile_error")["compiled"] is False and make("runtime_error")["compiled"] is True
    assert make("timeout", evidence={"phase": "compile"})["compiled"] is False
    assert make("timeout", evidence={"phase": "run"})["compiled"] is True


def test_unknown_names_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown verdict"):
        make("almost_correct")
    with pytest.raises(ValueError, match="unknown verdict"):
        make("correct", kernelbench="fine")


def test_missing_result_is_a_complete_runtime_error() -> None:
    v = missing("t/r0s0")
    assert set(v) == set(Verdict.__annotations__)
    assert v["verdict"] == v["verdict_kernelbench"] == "runtime_error" and "t/r0s0" in v["log_tail"]


def test_summary_keeps_the_results_fields_only() -> None:
    v = make("correct", speedup_eager=1.5, speedup_compile=0.8, custom_kernel_share=1.0)
    assert list(summary(v)) == list(SUMMARY_FIELDS)
    assert summary(v)["speedup_eager"] == 1.5 and summary(None) == dict.fromkeys(SUMMARY_FIELDS)
    assert rank(summary(v)) == rank(v)


def test_rank_orders_strict_then_kernelbench_then_speed_then_stage() -> None:
    ordered = [
        make("no_code"),
        make("compile_error"),
        make("wrong_output"),
        make("static_reject", kernelbench="correct", speedup_eager=3.0),
        make("correct", speedup_eager=0.5),
        make("correct", speedup_eager=1.2),
    ]
    assert sorted(ordered, key=rank) == ordered
    assert rank(make("wrong_output", speedup_eager=9.0)) == rank(make("wrong_output"))  # no speed if wrong
    assert VERDICTS[0] == "no_code" and VERDICTS[-1] == "correct"


def test_a_region_check_is_compare_s_evidence_named_and_every_key_it_can_hold_is_documented() -> None:
    ref = torch.tensor([[0.5, -0.25], [1.0, 2.0]])
    off = ref + torch.tensor([[0.0, 0.0], [0.0, 1.0]])
    outcomes = {
        "ok": compare(ref.clone(), ref, 1e-5, 1e-5),
        # judged again by the derived tolerance (evaluator.regions.judge), which 1.0 is beyond
        "values": {**compare(off, ref, 1e-5, 1e-5), "tolerance": 0.5},
        "nan_inf": compare(ref.masked_fill(ref < 0, float("nan")), ref, 1e-5, 1e-5),
        "shape": compare(ref.reshape(-1), ref, 1e-5, 1e-5),
        "dtype": compare(ref.double(), ref, 1e-5, 1e-5),
        "type": compare(1.0, ref, 1e-5, 1e-5),
        "value": compare(3, 2, 1e-5, 1e-5),
        "structure": compare((ref, ref), ref, 1e-5, 1e-5),
    }
    checks = {reason: region_check("r1", compared) for reason, compared in outcomes.items()}
    assert {reason: c.get("reason", "ok") for reason, c in checks.items()} == {r: r for r in outcomes}
    assert [c["verdict"] for c in checks.values()] == ["correct"] + ["wrong_output"] * 7
    assert all(c["id"] == "r1" for c in checks.values())
    wrong = checks["values"]
    assert (wrong["first_mismatch_index"], wrong["first_mismatch"]) == ([1, 1], {"expected": 2.0, "got": 3.0})
    assert (wrong["mismatches"], wrong["numel"]) == (1, 4)
    # the documentation is complete and nothing in it is stale: every key some outcome sets, and no other
    assert set().union(*checks.values()) == set(RegionCheck.__annotations__)


def test_a_region_check_refuses_keys_it_does_not_document() -> None:
    assert region_check("r2", {"ok": False, "mismatches": 3})["verdict"] == "wrong_output"
    with pytest.raises(ValueError, match="undocumented"):
        region_check("r2", {"ok": False, "first_wrong": [0]})
    with pytest.raises(ValueError, match="not a region comparison"):
        region_check("r2", {"reason": "values"})
    with pytest.raises(ValueError, match="undocumented"):
        region_check("r2", {"ok": True, "verdict": "wrong_output"})  # the verdict follows from ok
