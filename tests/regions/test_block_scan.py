"""The block_scan shape (regions.block_scan): a cumsum or cumprod over long rows runs a block a row in
contiguous chunks, the first contract's body twice (the chunk's total, then from its carry); short rows
keep one thread a row, and so do strided ones (PyTorch carries one float along them in order, as the first
contract does). On the GPU both are strictly correct."""

from __future__ import annotations

from pathlib import Path

import pytest
from one_op import one_line, parts, strictly_correct_on_gpu

from regions.block_scan import block_scan
from regions.check import check
from regions.export import Written
from regions.model import RegionError
from regions.rules import rule_body
from regions.shapes import BLOCK_SCAN, ruled_launch, shaped, shapes_for


def test_a_long_cumsum_takes_a_block_a_row_and_runs_the_body_twice() -> None:
    ((region, first),) = parts(one_line("torch.cumsum(x, dim=1)", "torch.randn(128, 4000)"))
    body = rule_body(region, first)
    shaped = block_scan(region)
    assert check(first, body).ok and check(shaped, body).ok
    assert shaped.launch["block"] == [256, 1, 1] and shaped.launch["grid"] == [128, 1, 1]
    assert (
        "kg_total[kg_t] = kg_scan(0.0f, false);" in shaped.tail
        and "kg_scan(kg_total[kg_t], true);" in shaped.tail
    )
    assert "kg_run = kg_run + kg_here;" in shaped.tail  # a sum's chunks add their totals
    assert "float carry = 0.0f;" in first.head  # one thread in order: a float, as PyTorch's strided scan
    assert "double kg_run" in shaped.tail and "double carry" in shaped.head  # chunks: the exact scan's side
    assert ruled_launch(region, body)[0] == BLOCK_SCAN  # the framework's own launch for a long row
    assert BLOCK_SCAN in [s.name for s, _ in shapes_for(region)]


def test_a_short_scan_keeps_one_thread_a_row() -> None:
    ((region, first),) = parts(one_line("torch.cumprod(x, dim=-1)", "torch.randn(64, 100)"))
    with pytest.raises(RegionError, match="too short"):
        block_scan(region)
    assert BLOCK_SCAN not in [s.name for s, _ in shapes_for(region)]


def test_a_strided_scan_keeps_one_thread_a_row() -> None:
    ((region, _),) = parts(one_line("torch.cumsum(x, dim=0)", "torch.randn(6000, 48)"))
    with pytest.raises(RegionError, match="strided row"):
        block_scan(region)
    assert BLOCK_SCAN not in [s.name for s, _ in shapes_for(region)]


@pytest.mark.gpu
@pytest.mark.parametrize(
    ("expr", "inputs"),
    [
        ("torch.cumsum(x, dim=1)", "torch.rand(64, 4096)"),  # chunks of 16
        ("torch.cumprod(x, dim=-1)", "1.0 + 0.001 * torch.randn(32, 5000)"),  # the last chunk short
    ],
)
def test_block_scan_is_strictly_correct_on_the_gpu(eval_cache: Path, expr: str, inputs: str) -> None:
    problem = one_line(expr, inputs)
    ((region, first),) = parts(problem)
    written = [Written(region, shaped(region, BLOCK_SCAN), rule_body(region, first))]
    strictly_correct_on_gpu(problem, written, eval_cache)


@pytest.mark.gpu
def test_one_thread_carries_a_strided_cumsum_in_float_as_pytorch_does(eval_cache: Path) -> None:
    """6000 terms along a stride: a double carry (or block_scan's chunks) was 1e-4 off the float reference
    at a value of -6e-4, past KernelBench's atol (H100); one float carried in order is PyTorch's own loop."""
    problem = one_line("torch.cumsum(x, dim=0)", "torch.randn(6000, 48)")
    ((region, first),) = parts(problem)
    strictly_correct_on_gpu(problem, [Written(region, first, rule_body(region, first))], eval_cache)
