"""The one verdict shape: construction, the summary results files keep, and the one ranking."""

from __future__ import annotations

import pytest

from evaluator.verdict import SUMMARY_FIELDS, VERDICTS, Verdict, make, missing, rank, summary


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
