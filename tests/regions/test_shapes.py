"""Launch shapes (regions.shapes; the products' in regions.tiles and regions.blocked_tiles): the first
contract's body runs unchanged per shared-memory tile or register block (products), four elements a thread
(maps) or a block a row (reductions); NVRTC compiles each here, the exported programs carry their blocks
and grids, and on the GPU they are strictly correct."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from evaluator.problem import load_problems
from regions.block_fold import block_fold
from regions.blocked_tiles import blocked, split
from regions.check import check
from regions.export import Written, export_program, region_markers
from regions.model import RegionError
from regions.offering import choose, contracted, cut
from regions.shapes import (
    BLOCK_FOLD,
    BLOCK_ROW,
    BLOCKED,
    DOT,
    EACH_ROW,
    ROW_THREADS,
    SPLIT,
    SPLIT_FOLD,
    TILED,
    VECTOR4,
    block_rows,
    moves_unchanged,
    ruled_launch,
    shaped,
    shapes_for,
    vectorised,
)
from regions.tiles import TILE, dot, tiled
from regions.trace import trace_problem

SUM = "for (int64_t k = 0; k < K; ++k) result += A(k) * B(k);"
EPILOGUE = "float t1 = t0 - 2.0f;\nfloat t2 = t1 * 1.5f;\nfloat t3 = kg_relu(t2);"  # level 2 problem 9's map
ROW_SUM = "result = 0.0f;\nfor (int64_t k = 0; k < R; ++k) result += t0(k);"  # demo task 2's reduce
DEMO = Path(__file__).resolve().parents[2] / "graph" / "demo_tasks"


def _offered(kernelbench_dir: Path, level: int | None, pid: int, ambition: str = "conservative"):
    folder = kernelbench_dir / f"level{level}" if level else DEMO
    problem = next(iter(load_problems(folder, ids=[pid])))
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


def test_blocked_products_run_the_body_once_per_output_of_a_threads_block(kernelbench_dir: Path) -> None:
    """8 x 8 outputs per thread where the sum is float, 4 x 4 where it is kept in double (K > 4096); the
    body runs for each k of the staged slice and each of the thread's outputs, adding into that output's
    running sum, so the unrolled loops read each staged value once per slice for a whole row or column of
    outputs (a run of four adjacent ones in one 16-byte shared load), one fused multiply-add a term, and
    the thread holds its sums and one row and column (at most 128 registers: two blocks an SM, where a
    sum per slice beside the totals took 223)."""
    from evaluator.regions.nvrtc import compile_kernel

    for pid, per, grid in ((1, 8, [32, 32, 1]), (3, 8, [16, 4, 128]), (6, 4, [4, 4, 1])):
        _, ((region, first),) = _offered(kernelbench_dir, 1, pid)
        shaped = blocked(region)
        assert check(first, SUM).ok and check(shaped, SUM).ok, pid
        assert shaped.launch["block"] == [256, 1, 1] and shaped.launch["grid"] == grid, pid
        assert f"kg_total[{per}][{per}]" in shaped.head and "const int64_t K = 1;" in shaped.facts
        assert (
            "result = kg_total[kg_i][kg_j];" in shaped.head
            and "kg_total[kg_i][kg_j] = result;" in shaped.tail
        )
    _, ((region, _),) = _offered(kernelbench_dir, 1, 1)
    built = compile_kernel(check(blocked(region), SUM).source, options=["-Xptxas=-v"])
    ptx = built.ptx
    assert ptx.count("ld.shared.v4.f32") == 8 * (8 + 8) // 4 and ptx.count("fma.rn.f32") == 8 * 8 * 8
    assert ptx.count("add.f32") == 0  # each term fused into its sum: no separate addition
    (used,) = re.findall(r"Used (\d+) registers", built.log)
    assert int(used) <= 128 and "0 bytes spill stores" in built.log
    assert ptx.count("ld.shared") == ptx.count("ld.shared.v4.f32")
    for pid in (1, 6):  # the output a thread stores is the one its body computed
        contract = blocked(_offered(kernelbench_dir, 1, pid)[1][0][0])
        (computed,) = [line for line in contract.head.splitlines() if "m = kg_m0 + 4 * kg_ty" in line]
        (stored,) = [line for line in contract.tail.splitlines() if "m = kg_m0 + 4 * kg_ty" in line]
        assert computed.strip() == stored.strip()
    _, ((vector, _),) = _offered(kernelbench_dir, 1, 4)
    with pytest.raises(RegionError, match="fills no 64 x 64 tile"):
        blocked(vector)


def test_a_small_output_of_a_long_sum_splits_k_over_blocks_that_add_into_a_zeroed_output(
    kernelbench_dir: Path,
) -> None:
    """Level 1's K = 524288 on a 256 x 256 output: 4 output tiles of 128 x 128, each summed by 128 blocks
    over runs of 4096 values of K in float (runs no longer than a float sum keeps within the tolerance);
    square 4096 x 4096 (K = 4096) fills the GPU unsplit; standard 2048 x 4096 with K = 8192 fills it too,
    and splits K in two for float sums."""
    problem, ((region, first),) = _offered(kernelbench_dir, 1, 6)
    shaped = split(region)
    assert check(first, SUM).ok and check(shaped, SUM).ok
    assert shaped.launch["grid"] == [2, 2, 128] and shaped.launch["zero"] is True
    assert "kg_k0 = (blockIdx.z % 128) * 4096" in shaped.head and "atomicAdd(&p_out[" in shaped.tail
    assert "float kg_total[8][8];" in shaped.head
    _, ((standard, _),) = _offered(kernelbench_dir, 1, 2)
    assert split(standard).launch["grid"] == [32, 16, 2] and "float kg_total[8][8];" in split(standard).head
    assert "zero=True," in export_program(problem, [Written(region, shaped, SUM)], "nvrtc")
    assert "torch::zeros({256, 256}" in export_program(problem, [Written(region, shaped, SUM)], "load_inline")
    assert "zero" not in blocked(region).launch and "atomicAdd" not in blocked(region).tail
    _, ((square, _),) = _offered(kernelbench_dir, 1, 1)
    with pytest.raises(RegionError, match="1024 output tiles and K = 4096 leave nothing to split"):
        split(square)


def test_a_matrix_times_a_vector_runs_a_block_per_output_over_strided_shares(kernelbench_dir: Path) -> None:
    _, ((region, first),) = _offered(kernelbench_dir, 1, 4)
    shaped = dot(region)
    assert check(first, SUM).ok and check(shaped, SUM).ok
    assert shaped.launch["grid"] == [2048, 1, 1] and shaped.launch["block"] == [256, 1, 1]
    assert "return kg_a(kg_t + k * 256);" in shaped.head and "double result = 0.0;" in shaped.head
    assert "kg_part[kg_t] += kg_part[kg_t + kg_s];" in shaped.tail
    assert [s.name for s, _ in shapes_for(region)] == [DOT]
    _, ((square, _),) = _offered(kernelbench_dir, 1, 1)
    with pytest.raises(RegionError, match="4096 columns wide with K = 4096 is no dot product"):
        dot(square)


def test_a_body_that_touches_memory_itself_does_not_move_to_tiles(kernelbench_dir: Path) -> None:
    """Measured: a greedy body's `p_out[m * N + j] = result;` ran once per slice on tiles, and the edge
    tiles' idle threads wrote into the next row: 115,319 wrong elements on level 1's problem 8."""
    _, ((region, first),) = _offered(kernelbench_dir, 1, 1)
    body = SUM + "\np_out[m * N + j] = result;"
    assert check(first, body).ok and check(tiled(region), body).ok
    assert moves_unchanged(SUM) and not moves_unchanged(body)
    assert not check(tiled(region), SUM + "\np_out[i] = result;").ok  # no element index on tiles


def test_exported_programs_carry_the_blocks_and_the_grid(kernelbench_dir: Path) -> None:
    problem, ((region, _),) = _offered(kernelbench_dir, 1, 1)
    written = [Written(region, tiled(region), SUM)]
    nvrtc = export_program(problem, written, "nvrtc")
    assert "block=(16, 16, 1)," in nvrtc and "grid=(256, 256, 1)," in nvrtc
    inline = export_program(problem, written, "load_inline")
    assert "const dim3 grid(256, 256, 1);" in inline and "<<<grid, block, 0," in inline
    assert region_markers(written)[0]["id"] == "r0"


def test_each_kind_is_offered_the_shapes_that_fit_it(kernelbench_dir: Path) -> None:
    _, ((product, _),) = _offered(kernelbench_dir, 1, 1)
    _, ((pointwise, _),) = _offered(kernelbench_dir, 2, 9)
    _, parts = _offered(kernelbench_dir, None, 2, "moderate")  # x * x, then its row sums
    _, temperature = _offered(kernelbench_dir, None, 3, "moderate")
    (softmax,) = [r for r, _ in temperature if r.kind == "reduce"]
    menus = [[s.name for s, _ in shapes_for(r)] for r in (product, pointwise, parts[1][0], softmax)]
    # softmax writes out(k): its rows take a warp or a block that share the statistics
    assert menus == [[TILED, BLOCKED], [VECTOR4], [BLOCK_ROW], [EACH_ROW]]
    with pytest.raises(RegionError, match="no launch shape named 'warp'"):
        shaped(product, "warp")
    with pytest.raises(RegionError, match="only a map"):
        vectorised(product)
    with pytest.raises(RegionError, match="one value per row"):
        block_rows(softmax)


def test_the_vector_shape_runs_each_lane_through_the_first_contracts_body(kernelbench_dir: Path) -> None:
    problem, ((region, first),) = _offered(kernelbench_dir, 2, 9)
    four = vectorised(region)
    assert check(first, EPILOGUE).ok and check(four, EPILOGUE).ok
    assert "reinterpret_cast<const float4*>(p_t0)[kg_q]" in four.head and "make_float4(" in four.tail
    assert "const float t0 = kg_l_t0[kg_lane];" in four.facts  # the same name the body read before
    assert four.launch["block"] == [256, 1, 1] and four.launch["grid"] == [1024 * 8192 // 4 // 256, 1, 1]
    assert "block=(256, 1, 1)," in export_program(problem, [Written(region, four, EPILOGUE)], "nvrtc")


def test_a_map_whose_size_is_no_multiple_of_four_has_no_vector_shape() -> None:
    from evaluator.problem import problem_from_dict

    source = (
        "import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    def forward(self, x):\n"
        "        return torch.relu(x) * 2.0\n\n\ndef get_inputs():\n    return [torch.randn(3, 5)]\n\n\n"
        "def get_init_inputs():\n    return []\n"
    )
    problem = problem_from_dict({"name": "odd", "level": 0, "problem_id": 0, "source": source})
    fit, _ = contracted(cut(trace_problem(problem), "moderate"))
    (region, _), *_ = fit
    with pytest.raises(RegionError, match="15 elements are not a multiple of 4"):
        vectorised(region)
    assert shapes_for(region) == []


def test_the_block_shape_gives_each_thread_a_strided_share_of_the_row(kernelbench_dir: Path) -> None:
    _, parts = _offered(kernelbench_dir, None, 2, "moderate")
    region, first = parts[1]
    row = block_rows(region)
    assert check(first, ROW_SUM).ok and check(row, ROW_SUM).ok
    assert f"p_t0[base + (kg_t + k * {ROW_THREADS}) * 1]" in row.head
    assert "kg_part[kg_t] = a + b;" in row.tail  # a sum's partial results add up
    assert row.launch["block"] == [ROW_THREADS, 1, 1] and row.launch["grid"] == [512, 1, 1]


@pytest.mark.gpu
@pytest.mark.parametrize(
    ("level", "pid", "shape", "body", "ambition"),
    [(2, 9, VECTOR4, EPILOGUE, "conservative"), (None, 2, BLOCK_ROW, ROW_SUM, "moderate")],
)
def test_vector_and_block_shapes_are_strictly_correct_on_the_gpu(
    kernelbench_dir: Path, eval_cache: Path, level: int | None, pid: int, shape: str, body: str, ambition: str
) -> None:
    from evaluator.api import evaluate_many
    from evaluator.config import EvalConfig
    from evaluator.jobs import Job

    problem, parts = _offered(kernelbench_dir, level, pid, ambition)
    written = [
        Written(
            r,
            shaped(r, shape) if i == len(parts) - 1 else c,
            body if i == len(parts) - 1 else "float t1 = x * x;",
        )
        for i, (r, c) in enumerate(parts)
    ]
    source = export_program(problem, written, "nvrtc")
    job = Job(f"{shape}{pid}", problem, source, code=source, extracted=True, regions=region_markers(written))
    config = EvalConfig(backend="cuda", cache_dir=str(eval_cache), reference_compile="off", timing_trials=5)
    (verdict,) = evaluate_many([job], config)
    assert verdict["verdict"] == "correct", (verdict["evidence"], verdict["log_tail"][-2000:])
    assert {r["verdict"] for r in verdict["evidence"]["regions"]} == {"correct"}


@pytest.mark.gpu
@pytest.mark.parametrize(
    ("shape", "pid"),
    [
        (TILED, 3),
        (TILED, 10),
        (BLOCKED, 3),
        (BLOCKED, 6),
        (BLOCKED, 8),
        (BLOCKED, 10),
        (SPLIT, 2),
        (SPLIT, 6),
        (DOT, 4),
    ],
)
def test_product_shapes_are_strictly_correct_on_the_gpu(
    kernelbench_dir: Path, eval_cache: Path, shape: str, pid: int
) -> None:
    """Batched, 3-D, irregular (edge tiles on every side) and long-K (sums in double) products; K split
    over blocks adding float runs into a zeroed output (K = 8192 in two, K = 524288 in 128); a matrix
    times a vector, a block per output."""
    from evaluator.api import evaluate_many
    from evaluator.config import EvalConfig
    from evaluator.jobs import Job

    problem, ((region, _),) = _offered(kernelbench_dir, 1, pid)
    written = [Written(region, shaped(region, shape), SUM)]
    source = export_program(problem, written, "nvrtc")
    job = Job(f"{shape}{pid}", problem, source, code=source, extracted=True, regions=region_markers(written))
    config = EvalConfig(backend="cuda", cache_dir=str(eval_cache), reference_compile="off", timing_trials=5)
    (verdict,) = evaluate_many([job], config)
    assert verdict["verdict"] == "correct", (verdict["evidence"], verdict["log_tail"][-2000:])
    assert [r["verdict"] for r in verdict["evidence"]["regions"]] == ["correct"]


def test_a_fused_fold_runs_a_block_per_row_and_its_steps_once_per_row(kernelbench_dir: Path) -> None:
    """Level 3's ResNet block at moderate: a batch norm's variance with `+ eps` and rsqrt fused, 64 rows
    of 501,760 elements; the block combines the row's mean, then the squares, and thread 0 runs the steps."""
    _, parts = _offered(kernelbench_dir, 3, 8, "moderate")
    region, first = next((r, c) for r, c in parts if [s.target for s in r.steps][0] == "torch.var")
    body = "float t1 = reduced + 1e-05f;\nfloat t2 = rsqrtf(t1);"
    shaped = block_fold(region)
    assert check(first, body).ok and check(shaped, body).ok
    assert shaped.launch["grid"] == [64, 1, 1] and shaped.launch["block"] == [256, 1, 1]
    assert "const float row_mean = (float)(kg_part[0] / R);" in shaped.head
    assert "for (int64_t k = kg_t; k < R; k += 256) {" in shaped.head and "if (kg_t == 0) {" in shaped.head
    assert [s.name for s, _ in shapes_for(region)] == [BLOCK_FOLD, SPLIT_FOLD]
    mean, _ = parts[0]
    with pytest.raises(RegionError, match="only a fused fold"):
        block_fold(mean)


def test_the_framework_runs_a_body_on_its_kinds_ruled_shape_where_it_moves_unchanged(
    kernelbench_dir: Path,
) -> None:
    """A product on dot, split or blocked (in that order, the first that fits), a map on vector4, a
    reduction on a block a row; a body that touches memory itself stays on its first contract."""
    ruled = {}
    for pid in (1, 4, 6):
        _, ((region, _),) = _offered(kernelbench_dir, 1, pid)
        ruled[pid] = ruled_launch(region, SUM)
    assert {pid: launch[0] for pid, launch in ruled.items()} == {1: BLOCKED, 4: DOT, 6: SPLIT}
    assert ruled[6][1].launch["zero"] is True
    _, ((product, _),) = _offered(kernelbench_dir, 1, 1)
    assert ruled_launch(product, SUM + "\np_out[i] = result;") is None
    _, ((pointwise, _),) = _offered(kernelbench_dir, 2, 9)
    assert ruled_launch(pointwise, EPILOGUE)[0] == VECTOR4
    _, parts = _offered(kernelbench_dir, None, 2, "moderate")
    assert ruled_launch(parts[1][0], ROW_SUM)[0] == BLOCK_ROW
    assert ruled_launch(parts[1][0], "result = 1.0f;") is None  # no fold of the row: fails the checks
