"""harness.compare's one pass: the same verdict and evidence chunk by chunk as over the whole output."""

from __future__ import annotations

import pytest
import torch

from evaluator import harness


def _mismatching() -> tuple[torch.Tensor, torch.Tensor]:
    torch.manual_seed(3)
    ref = torch.randn(40, 25)
    got = ref.clone()
    got[7, 3] += 1.0  # the first mismatch, in a later chunk than the first when chunks are 7 elements
    got[30, 0] = float("nan")
    got[39, 24] -= 0.5
    return got, ref


def test_chunked_compare_equals_the_whole_one(monkeypatch: pytest.MonkeyPatch) -> None:
    got, ref = _mismatching()
    whole = harness.compare(got, ref, 1e-4, 1e-4)
    monkeypatch.setattr(harness, "_CHUNK", 7)
    chunked = harness.compare(got, ref, 1e-4, 1e-4)
    assert chunked == whole
    assert whole["ok"] is False and whole["reason"] == "nan_inf" and whole["mismatches"] == 3
    assert whole["first_mismatch_index"] == [7, 3]
    assert whole["first_mismatch"] == {"expected": float(ref[7, 3]), "got": float(got[7, 3])}
    assert whole["max_abs_err"] == pytest.approx(1.0)  # the NaN is a mismatch, not an error size


def test_float32_outputs_are_judged_as_kernelbench_s_allclose() -> None:
    torch.manual_seed(4)
    ref = torch.randn(5000) * 100
    for scale in (0.5e-4, 1e-4, 2e-4, 1e-3):
        got = ref + scale * (1 + ref.abs()) * torch.sign(torch.randn(5000))
        assert harness.compare(got, ref, 1e-4, 1e-4)["ok"] == torch.allclose(got, ref, rtol=1e-4, atol=1e-4)


def test_stats_name_what_is_not_finite_where_the_reference_is() -> None:
    ref = torch.tensor([1.0, float("inf"), -2.0, 3.0e38])
    inf = float("inf")
    inf_where_finite = harness.tensor_stats(torch.tensor([1.0, inf, inf, 3.0e38]), ref, 0, 0)
    assert inf_where_finite.nonfinite and inf_where_finite.unbounded
    overflow = harness.tensor_stats(torch.tensor([1.0, float("inf"), -2.0, -3.0e38]), ref, 0, 0)
    assert not overflow.nonfinite and overflow.unbounded  # finite, but 6e38 apart: beyond float32
    fine = harness.tensor_stats(torch.tensor([1.5, float("inf"), -2.0, 3.0e38]), ref, 0, 0)
    assert (fine.nonfinite, fine.unbounded, fine.max_abs_err) == (False, False, 0.5)
    assert fine.ref_max_abs == float(ref[3])
    assert fine.first == 0 and fine.mismatches == 2  # inf against inf is a mismatch (NaN difference)
