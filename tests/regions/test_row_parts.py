"""Rows shared by several blocks (regions.row_parts; the split_row and split_fold shapes): few long rows
split, many or short rows keep a block a row, the row's last block gathers and finishes, and on the GPU the
shared rows are strictly correct, launch after launch (each row's counter returns to zero)."""

from __future__ import annotations

from pathlib import Path

import pytest
from one_op import one_line, parts, ruled_program, strictly_correct_on_gpu

from evaluator.problem import load_problems
from regions.block_fold import split_fold
from regions.check import check
from regions.model import RegionError
from regions.row_parts import FEW_ROWS, PARTS_TARGET, parts_of
from regions.rules import rule_body
from regions.shapes import BLOCK_ROW, SPLIT_FOLD, SPLIT_ROW, ruled_launch, split_rows

DEMO = Path(__file__).resolve().parents[2] / "graph" / "demo_tasks"
VARIANCE_BODY = "float t1 = reduced + 1e-05f;\nfloat t2 = rsqrtf(t1);"


def _resnet_block(kernelbench_dir: Path):
    problem = next(iter(load_problems(kernelbench_dir / "level3", ids=[8])))
    return problem, parts(problem)


def _reduction(expr: str, shape: tuple[int, ...]):
    return one_line(expr, f"torch.randn{shape}")


def test_few_long_rows_are_shared_by_enough_blocks_to_fill_the_gpu() -> None:
    assert parts_of(64, 501_760, 256) == -(-PARTS_TARGET // 64)  # a batch norm's 64 channels: 17 a row
    assert parts_of(1, 1 << 22, 256) == 256  # one row: at most a partial per thread of the gatherer
    assert parts_of(64, 20_000, 256) == 1  # too short to give every thread 64 elements of two blocks
    assert parts_of(FEW_ROWS, 1 << 22, 256) == 1  # enough rows fill the GPU a block a row


def test_a_batch_norms_statistics_split_their_rows_over_blocks(kernelbench_dir: Path) -> None:
    """Level 3's ResNet block: each mean and variance of 64 rows of 501,760 elements, 17 blocks a row;
    the variance sums deviations from the row's first element and their squares in one read."""
    _, parts = _resnet_block(kernelbench_dir)
    mean, mean_first = parts[0]
    variance, variance_first = next((r, c) for r, c in parts if r.steps[0].target == "torch.var")
    shared = split_fold(variance)
    assert check(variance_first, VARIANCE_BODY).ok and check(shared, VARIANCE_BODY).ok
    assert shared.launch["grid"] == [17, 64, 1] and shared.launch["block"] == [256, 1, 1]
    assert "__device__ double kg_parts_r2[2176];" in shared.head  # 64 rows x 17 blocks x 2 sums
    assert "const double d = t0(k) - kg_c;" in shared.head and "row_mean" not in shared.head
    assert "result = kg_part2[0] - kg_part[0] * kg_part[0] / R;" in shared.head
    assert "if (!kg_last) return;" in shared.head and "kg_done_r2[i] = 0u;" in shared.head
    body = rule_body(mean, mean_first)
    name, row = ruled_launch(mean, body)
    assert name == SPLIT_ROW and row.launch["grid"] == [17, 64, 1]
    assert "const int64_t R = (R_ALL - kg_g + 4351) / 4352;" in row.head
    assert ruled_launch(variance, VARIANCE_BODY)[0] == SPLIT_FOLD


def test_many_rows_keep_a_block_a_row() -> None:
    """Demo task 2's 512 rows fill the GPU a block a row: no split offered, block_row is the ruled one."""
    problem = next(iter(load_problems(DEMO, ids=[2])))
    region, first = parts(problem)[1]
    with pytest.raises(RegionError, match="need no more than a block a row"):
        split_rows(region)
    assert ruled_launch(region, rule_body(region, first))[0] == BLOCK_ROW


@pytest.mark.gpu
@pytest.mark.parametrize(
    ("expr", "shape", "shapes"),
    [
        ("torch.sum(x)", (1024, 4096), [SPLIT_ROW]),  # one row: 256 blocks
        ("torch.amax(x, dim=(0, 2))", (64, 8, 4096), [SPLIT_ROW]),  # 8 rows of 262,144, signed values
        ("torch.var(x, dim=1, keepdim=True) * 2.0", (16, 1 << 20), [SPLIT_FOLD]),  # fused var, 16 rows
    ],
)
def test_shared_rows_are_strictly_correct_on_the_gpu(
    eval_cache: Path, expr: str, shape: tuple[int, ...], shapes: list[str]
) -> None:
    _gpu_correct(_reduction(expr, shape), shapes, eval_cache)


@pytest.mark.gpu
def test_a_batch_norms_shared_statistics_are_strictly_correct_on_the_gpu(
    kernelbench_dir: Path, eval_cache: Path
) -> None:
    """Level 3's ResNet block, the rules' bodies on their ruled shapes: three batch norms' means and
    variances on shared rows, then the maps."""
    problem = next(iter(load_problems(kernelbench_dir / "level3", ids=[8])))
    _gpu_correct(problem, [SPLIT_ROW, SPLIT_FOLD] * 3, eval_cache)


def _gpu_correct(problem, shared: list[str], eval_cache: Path) -> None:
    names, written = ruled_program(problem)
    assert [n for n in names if n in (SPLIT_ROW, SPLIT_FOLD)] == shared
    strictly_correct_on_gpu(problem, written, eval_cache, trials=20)
