"""Reductions a block a row beyond sums and extrema: an argmax or argmin (regions.block_index: the threads'
(value, index) pairs combined, a tie to the first index), a variance or standard deviation (block_row with
the row's mean from the whole block first), a logsumexp (each share shifted by its own max) and a product.
Each is the rules' launch for long rows, NVRTC-checked here; on the GPU each is strictly correct."""

from __future__ import annotations

from pathlib import Path

import pytest
from one_op import one_line, parts, strictly_correct_on_gpu

from regions.block_index import block_index
from regions.check import check
from regions.export import Written
from regions.model import RegionError
from regions.rules import rule_body
from regions.shapes import BLOCK_INDEX, BLOCK_ROW, ruled_launch, shaped, split_rows

LONG_ROWS = [
    ("torch.argmax(x, dim=1)", "torch.randn(64, 5000)", BLOCK_INDEX),
    ("torch.argmin(x, dim=0)", "torch.randn(3000, 40)", BLOCK_INDEX),  # a strided row
    ("torch.var(x, dim=-1, unbiased=False)", "torch.randn(48, 3000) + 3.0", BLOCK_ROW),
    ("torch.std(x, dim=1, keepdim=True)", "torch.randn(48, 3000)", BLOCK_ROW),
    ("torch.logsumexp(x, dim=1)", "10.0 * torch.randn(64, 5000)", BLOCK_ROW),
    ("torch.prod(x, dim=-1)", "1.0 + 0.01 * torch.randn(64, 2000)", BLOCK_ROW),
]


@pytest.mark.parametrize(("expr", "inputs", "shape"), LONG_ROWS)
def test_long_rows_take_a_block_a_row_by_rule(expr: str, inputs: str, shape: str) -> None:
    ((region, first),) = parts(one_line(expr, inputs))
    body = rule_body(region, first)
    name, contract = ruled_launch(region, body)
    assert name == shape and contract.launch["block"] == [256, 1, 1]
    assert check(contract, body).ok


def test_the_pairs_combine_to_the_first_index() -> None:
    ((region, _),) = parts(one_line("torch.argmax(x, dim=1)", "torch.randn(8, 4096)"))
    contract = block_index(region)
    assert "kg_index = kg_t + index * 256;" in contract.tail
    assert "if (b > a || (b == a && ib < ia))" in contract.tail
    assert contract.launch["output_dtype"] == "int64" and contract.launch["grid"] == [8, 1, 1]


def test_short_rows_and_shared_variances_keep_their_shapes() -> None:
    ((region, _),) = parts(one_line("torch.argmin(x, dim=1)", "torch.randn(64, 100)"))
    with pytest.raises(RegionError, match="fill no block"):
        block_index(region)
    ((few, _),) = parts(one_line("torch.var(x, dim=1)", "torch.randn(4, 65536)"))
    with pytest.raises(RegionError, match="whole row in one block"):
        split_rows(few)


@pytest.mark.gpu
@pytest.mark.parametrize(("expr", "inputs", "shape"), LONG_ROWS)
def test_long_rows_are_strictly_correct_on_the_gpu(
    eval_cache: Path, expr: str, inputs: str, shape: str
) -> None:
    problem = one_line(expr, inputs)
    ((region, first),) = parts(problem)
    written = [Written(region, shaped(region, shape), rule_body(region, first))]
    strictly_correct_on_gpu(problem, written, eval_cache)


def test_a_body_that_needs_its_whole_row_keeps_the_first_contract() -> None:
    """A variance body with a mean of its own over R, or a scan body that never updates `carry`, is right
    on the first contract and would be wrong on a share: the framework keeps it one thread a row."""
    ((region, first),) = parts(one_line("torch.var(x, dim=1)", "torch.randn(48, 3000)"))
    own_mean = (
        "float m = 0.0f;\nfor (int64_t k = 0; k < R; ++k) m += x(k);\nm /= R;\n"
        "for (int64_t k = 0; k < R; ++k) { const float d = x(k) - m; result += d * d; }"
    )
    assert check(first, own_mean).ok
    assert ruled_launch(region, own_mean) is None
    assert ruled_launch(region, rule_body(region, first))[0] == BLOCK_ROW
    ((scan, first),) = parts(one_line("torch.cumsum(x, dim=1)", "torch.randn(16, 4096)"))
    own_sum = "float s = carry;\nfor (int64_t k = 0; k < R; ++k) { s += x(k); out(k) = s; }"
    assert check(first, own_sum).ok
    assert ruled_launch(scan, own_sum) is None
    assert ruled_launch(scan, rule_body(scan, first)) is not None


def test_a_fused_variance_keeps_its_framework_fold() -> None:
    """A variance with steps after it is a fused region: the fold is the framework's and the body only its
    steps (`reduced + eps`), which never name row_mean; it still moves to a block a row."""
    problem = one_line("torch.rsqrt(torch.var(x, dim=1) + 1e-5)", "torch.randn(48, 3000)")
    ((region, first),) = parts(problem, "aggressive")
    assert len(region.steps) > 1
    body = rule_body(region, first)
    assert "row_mean" not in body
    assert ruled_launch(region, body) is not None
