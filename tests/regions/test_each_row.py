"""The each_row shape (regions.each_row): a softmax, log_softmax or layer norm over contiguous elements
runs a warp (short rows) or a block (long rows) per row, the statistics combined over the row's threads
and the first contract's body writing out(k) for each thread's k; strided rows keep one thread a row. On
the GPU the shape is strictly correct."""

from __future__ import annotations

from pathlib import Path

import pytest
from one_op import one_line, parts, ruled_program, strictly_correct_on_gpu

from evaluator.problem import load_problems
from regions.check import check
from regions.each_row import each_row
from regions.model import RegionError
from regions.rules import rule_body
from regions.shapes import EACH_ROW, ruled_launch


def _problem(expr: str, shape: tuple[int, ...]):
    return one_line(expr, f"torch.randn{shape} * 4.0")


def _reduction(problem):
    return next((r, c) for r, c in parts(problem) if r.kind == "reduce")


def test_a_long_softmax_row_takes_a_block_and_its_body_moves_unchanged() -> None:
    """Level 1's softmax shape, 16 rows of 16,384: a block of 256 threads a row instead of 16 threads."""
    region, first = _reduction(_problem("torch.softmax(x, dim=1)", (16, 16384)))
    body = rule_body(region, first)
    shaped = each_row(region)
    assert check(first, body).ok and check(shaped, body).ok
    assert shaped.launch["block"] == [256, 1, 1] and shaped.launch["grid"] == [16, 1, 1]
    assert "const float row_max = (float)kg_part[threadIdx.y][0];" in shaped.head
    assert "if (kg_row) for (int64_t k = kg_t; k < R; k += 256) {" in shaped.head
    assert ruled_launch(region, body)[0] == EACH_ROW


def test_a_layer_norm_over_short_contiguous_rows_takes_a_warp_a_row(kernelbench_dir: Path) -> None:
    """Level 2 p3's layer norm over its last dim (64 elements, 4,194,304 rows): eight rows a block."""
    problem = next(iter(load_problems(kernelbench_dir / "level2", ids=[3])))
    region, first = _reduction(problem)
    body = rule_body(region, first)
    shaped = each_row(region)
    assert check(shaped, body).ok
    assert shaped.launch["block"] == [32, 8, 1] and shaped.launch["grid"] == [4194304 // 8, 1, 1]
    assert "const float row_rstd = rsqrtf((float)(kg_part[threadIdx.y][0] / R) + 1e-05f);" in shaped.head


def test_a_softmax_over_strided_elements_keeps_one_thread_a_row() -> None:
    region, first = _reduction(_problem("torch.softmax(x, dim=1)", (64, 32, 16)))
    with pytest.raises(RegionError, match="not contiguous"):
        each_row(region)
    assert ruled_launch(region, rule_body(region, first)) is None


@pytest.mark.gpu
@pytest.mark.parametrize(
    ("expr", "shape"),
    [
        ("torch.softmax(x, dim=1)", (16, 16384)),  # a block a row
        ("torch.log_softmax(x, dim=-1)", (4099, 100)),  # a warp a row, the last block part empty
        ("torch.nn.functional.layer_norm(x, (3, 50))", (1000, 3, 50)),  # a warp a row, two dims normalized
    ],
)
def test_each_row_is_strictly_correct_on_the_gpu(eval_cache: Path, expr: str, shape: tuple[int, ...]) -> None:
    problem = _problem(expr, shape)
    names, written = ruled_program(problem)
    assert names == [EACH_ROW]
    strictly_correct_on_gpu(problem, written, eval_cache)
