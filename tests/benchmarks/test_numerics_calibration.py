"""The calibration's own claims at a small size: summation orders inside the tolerance, approximations out."""

from __future__ import annotations

from benchmarks.numerics_calibration import gemm_row
from evaluator.config import EvalConfig


def test_signed_gemm_separates_summation_order_from_low_precision_operands() -> None:
    row = gemm_row(512, "signed", EvalConfig(backend="cpu"), 8)
    assert row["worst_legit"] < 0.5 < 2 < row["closest_approximation"], row


def test_a_wide_gap_on_short_sums() -> None:
    row = gemm_row(64, "extreme", EvalConfig(backend="cpu"), 8)
    assert row["worst_legit"] < 0.1 and row["closest_approximation"] > 10, row
