"""The tiled launch shape: the first contract's body runs per shared-memory tile on 2-D blocks; NVRTC
compiles it here, the exported programs carry its blocks and grid, and on the GPU it is strictly correct."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluator.problem import load_problems
from evaluator.regions.check import check
from evaluator.regions.export import Written, export_program, region_markers
from evaluator.regions.model import RegionError
from evaluator.regions.offering import choose, contracted, cut
from evaluator.regions.shapes import TILE, moves_to_tiles, tiled
from evaluator.regions.trace import trace_problem

SUM = "result = 0.0f;\nfor (int64_t k = 0; k < K; ++k) result += A(k) * B(k);"


def _offered(kernelbench_dir: Path, level: int, pid: int, ambition: str = "conservative"):
    problem = next(iter(load_problems(kernelbench_dir / f"level{level}", ids=[pid])))
    fit, _ = contracted(cut(trace_problem(problem), ambition))
    return problem, choose(fit, ambition)


def test_the_first_contracts_body_compiles_on_tiles(kernelbench_dir: Path) -> None:
    for pid, grid in ((1, [256, 256, 1]), (3, [128, 32, 128]), (10, [48, 64, 16])):
        _, ((region, first),) = _offered(kernelbench_dir, 1, pid)
        shaped = tiled(region)
        assert check(first, SUM).ok and check(shaped, SUM).ok, pid
        assert shaped.launch["block"] == [TILE, TILE, 1] and shaped.launch["grid"] == grid, pid
        assert "__shared__ float tile_a" in shaped.head and "__syncthreads();" in shaped.tail
        assert "const int64_t K = 16;" in shaped.facts  # the slice the body sums over


def test_products_the_shape_does_not_fit_say_why(kernelbench_dir: Path) -> None:
    _, ((vector, _),) = _offered(kernelbench_dir, 1, 4)  # matrix x vector: an output one column wide
    with pytest.raises(RegionError, match="fills no 16 x 16 tile"):
        tiled(vector)
    _, parts = _offered(kernelbench_dir, 3, 1, "aggressive")  # linear + bias + relu, fused
    with pytest.raises(RegionError, match="lone matmul"):
        tiled(parts[0][0])


def test_a_body_that_touches_memory_itself_does_not_move_to_tiles(kernelbench_dir: Path) -> None:
    """Measured: a greedy body's `p_out[m * N + j] = result;` ran once per slice on tiles, and the edge
    tiles' idle threads wrote into the next row: 115,319 wrong elements on level 1's problem 8."""
    _, ((region, first),) = _offered(kernelbench_dir, 1, 1)
    body = SUM + "\np_out[m * N + j] = result;"
    assert check(first, body).ok and check(tiled(region), body).ok
    assert moves_to_tiles(SUM) and not moves_to_tiles(body)
    assert not check(tiled(region), SUM + "\np_out[i] = result;").ok  # no element index on tiles


def test_exported_programs_carry_the_blocks_and_the_grid(kernelbench_dir: Path) -> None:
    problem, ((region, _),) = _offered(kernelbench_dir, 1, 1)
    written = [Written(region, tiled(region), SUM)]
    nvrtc = export_program(problem, written, "nvrtc")
    assert "block=(16, 16, 1)," in nvrtc and "grid=(256, 256, 1)," in nvrtc
    inline = export_program(problem, written, "load_inline")
    assert "const dim3 grid(256, 256, 1);" in inline and "<<<grid, block, 0," in inline
    assert region_markers(written)[0]["id"] == "r0"


@pytest.mark.gpu
@pytest.mark.parametrize("pid", [3, 10])
def test_tiled_products_with_short_sums_are_strictly_correct_on_the_gpu(
    kernelbench_dir: Path, eval_cache: Path, pid: int
) -> None:
    from evaluator.api import evaluate_many
    from evaluator.config import EvalConfig
    from evaluator.jobs import Job

    problem, ((region, _),) = _offered(kernelbench_dir, 1, pid)
    written = [Written(region, tiled(region), SUM)]
    source = export_program(problem, written, "nvrtc")
    job = Job(f"tiled{pid}", problem, source, code=source, extracted=True, regions=region_markers(written))
    config = EvalConfig(backend="cuda", cache_dir=str(eval_cache), reference_compile="off", timing_trials=5)
    (verdict,) = evaluate_many([job], config)
    assert verdict["verdict"] == "correct", (verdict["evidence"], verdict["log_tail"][-2000:])
    assert [r["verdict"] for r in verdict["evidence"]["regions"]] == ["correct"]
