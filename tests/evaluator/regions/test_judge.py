"""A region kernel judged alone: allclose's word, then the program's strict rule where allclose calls
values off, so a long sum off by what another summation order costs (a few times PyTorch's own float32
error, which is what atol = 1e-4 misses near zero) is not called wrong, while a kernel off by more than
that still is."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import torch

from evaluator.config import EvalConfig
from evaluator.regions.judge import judge_region, region_inputs

K = 16384  # PyTorch's float32 sum is 2e-4 off the exact one here; the derived tolerance is 32x that
REGION: dict[str, Any] = {
    "inputs": [{"name": "A", "shape": [8, K]}, {"name": "B", "shape": [K, 8]}],
    "scalars": [],
    "steps": [{"code": "t0 = torch.matmul(A, B)", "out": {"name": "t0"}}],
}
MARKER = {"id": "r0", "module": "ext", "launch": "run", "spec": REGION}


def _judged(kernel: Any) -> dict[str, Any]:
    candidate = SimpleNamespace(ext=SimpleNamespace(run=kernel))
    return dict(judge_region(MARKER, candidate, 0, EvalConfig(), torch.device("cpu")))


def _reordered(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a @ b + 1e-3  # 5x PyTorch's own error: beyond atol for every element under 9 in magnitude


def test_a_sum_in_another_order_is_judged_by_the_references_own_error() -> None:
    (a, b), _ = region_inputs(REGION, 0, torch.device("cpu"))
    assert not torch.allclose(_reordered(a, b), a @ b, atol=1e-4, rtol=1e-4)  # allclose alone fails it
    check = _judged(_reordered)
    assert check["verdict"] == "correct" and check["max_abs_err"] <= check["tolerance"]


def test_a_kernel_off_by_more_than_float32_costs_is_still_wrong() -> None:
    check = _judged(lambda a, b: a @ b + 0.05)
    assert check["verdict"] == "wrong_output" and check["max_abs_err"] > check["tolerance"]
    assert check["mismatches"] == 64 and check["first_mismatch_index"] == [0, 0]


def test_a_close_kernel_needs_no_float64_run() -> None:
    check = _judged(lambda a, b: a @ b)
    assert check["verdict"] == "correct" and "tolerance" not in check


def test_where_float32_overflows_and_float64_does_not_allclose_decides() -> None:
    """No float64 truth to derive a tolerance from (as the program's rule): an overflowing reference must
    not make every error tolerable."""
    region = {
        "inputs": [{"name": "A", "shape": [64]}],
        "scalars": [],
        "steps": [{"code": "t0 = torch.exp(A * 200.0)", "out": {"name": "t0"}}],
    }
    marker = {"id": "r0", "module": "ext", "launch": "run", "spec": region}
    candidate = SimpleNamespace(ext=SimpleNamespace(run=lambda a: torch.exp(a * 200.0) * 1.01))
    check = dict(judge_region(marker, candidate, 0, EvalConfig(), torch.device("cpu")))
    assert check["verdict"] == "wrong_output" and "tolerance" not in check
