"""Row maps: a map over the rows of reductions runs in their kernel after them. On the CPU: which groups
fuse, what the fused kernel reads and calls (NVRTC compiles it), and which groups stay apart; on the GPU the
assembled programs are judged by the evaluator as the region kind, every kernel's own check too."""

from __future__ import annotations

from pathlib import Path

import pytest
from one_op import by_rule, program_strictly_correct

from evaluator.problem import load_problem, problem_from_source, problem_to_dict
from regions.assemble import assemble
from regions.emulate import emulate
from regions.prologue import fused_prologues
from regions.row_maps import fused_row_maps, row_map

# family tasks: statistics of one thread a row (an RMS norm's mean of squares over a strided dim), and of
# a block a row: a sum (with |x| fused before it), a mean and a variance with its rsqrt, a standard
# deviation, strided rows (a batch norm's channels)
TASKS = (
    "level1/20_RMS_Norm_Channels.py",
    "level1/21_L1_Normalize_Rows.py",
    "level1/9_Group_Norm_Four_Groups.py",
    "level1/8_Instance_Norm_Maps.py",
    "level1/41_Std_Keepdim_Scale.py",
    "level1/10_Batch_Norm_Training_Stats.py",
)
ROWS = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x / torch.sum(x, dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(16, 512)]


def get_init_inputs():
    return []
"""
# the same sum without keepdim: broadcast against the square input it divides each column, not its row
COLUMNS = ROWS.replace("keepdim=True", "keepdim=False").replace("randn(16, 512)", "randn(512, 512)")
# the statistic is also read by PyTorch (a repeat, a copy no region computes), so it must be written
SHARED = ROWS.replace(
    "return x / torch.sum(x, dim=1, keepdim=True)",
    "s = torch.sum(x, dim=1, keepdim=True)\n        return x / s + s.repeat(1, 512)",
)
SHORT = ROWS.replace("randn(16, 512)", "randn(512, 16)")  # rows under a block: one thread a row
# two statistics of one thread a row each: two loops over the rows that one kernel does not merge
SHORT_TWO = SHORT.replace(
    "return x / torch.sum(x, dim=1, keepdim=True)",
    "return (x - x.mean(dim=1, keepdim=True)) / torch.amax(x, dim=1, keepdim=True)",
)


def test_a_map_over_a_sums_rows_runs_in_its_kernel() -> None:
    traced, written = by_rule(ROWS)
    total, divide = written
    rows = fused_row_maps(traced, written)
    assert rows.into == {divide.region.id: [total.region.id]} and rows.alone == [total]
    (fused,) = rows.program
    assert fused.region.id == divide.region.id and fused.region.output == divide.region.output
    assert [t.name for t in fused.region.inputs] == ["x"]
    assert [s.target for s in fused.region.steps] == ["torch.sum", "torch.div"]
    launch = fused.contract.launch
    assert launch["grid"] == [16, 1, 1] and launch["count"] == 16 and launch["output_shape"] == [16, 512]
    source = fused.contract.assemble(fused.body)
    assert f"kg_row_{total.region.id}(p_kg_in0, n)" in source
    assert source.count("p_out[") == 1  # the sum's store is kept in shared memory, the map's is the kernel's


def test_one_thread_a_row_runs_the_map_over_its_own_row(families_dir: Path) -> None:
    """Short rows (one thread each): the thread that folds a row writes the row's elements, and the fused
    kernel, built as host C++ and run on the CPU, computes the RMS norm's PyTorch lines; with another map
    body it does not (the kernel runs the map's body, not a copy of PyTorch's)."""
    traced, written = by_rule(SHORT)
    rows = fused_row_maps(traced, written)
    (fused,) = rows.program
    assert "block" not in fused.contract.launch and fused.contract.launch["count"] == 512
    got = emulate(fused.region, fused.contract, fused.body)
    assert got.ok, got.error
    traced, written = by_rule((families_dir / "level1/20_RMS_Norm_Channels.py").read_text())
    square, mean, divide = written
    (fused,) = fused_row_maps(traced, fused_prologues(traced, written).program).program
    assert [s.target for s in fused.region.steps][:2] == ["torch.pow", "torch.mean"]
    got = emulate(fused.region, fused.contract, fused.body)
    assert got.ok, got.error
    wrong = row_map(divide._replace(body="float t1 = x * t3;"), [fused_prologues(traced, written).program[0]])
    assert wrong is not None and not emulate(wrong.region, wrong.contract, wrong.body).ok


@pytest.mark.parametrize(
    ("source", "why"), [(COLUMNS, "columns"), (SHARED, "shared"), (SHORT_TWO, "two short")]
)
def test_rows_stay_apart_where_the_kernel_would_be_wrong_or_has_no_block(source: str, why: str) -> None:
    traced, written = by_rule(source)
    rows = fused_row_maps(traced, written)
    assert rows.into == {} and rows.program == written, why


@pytest.mark.parametrize("task", TASKS)
def test_family_norms_fuse_their_statistics(task: str, families_dir: Path) -> None:
    problem = load_problem(families_dir / task)
    _, written = by_rule(problem.source)
    built = assemble(problem_to_dict(problem), written)
    ((target, stats),) = built["row_maps"].items()
    forward = built["code"][built["code"].index("class ModelNew") :]
    assert f"_kg_ext_{target}.region_{target}_launch(" in forward
    assert not any(f"_kg_ext_{s}." in forward for s in stats)  # loaded for their own checks only
    assert {m["id"] for m in built["regions"]} >= {target, *stats}


def test_fusion_off_keeps_every_kernel() -> None:
    problem = problem_from_source(ROWS, name="rows")
    _, written = by_rule(ROWS)
    built = assemble(problem_to_dict(problem), written, fuse=False)
    assert built["row_maps"] == {} and built["prologues"] == {}
    assert sorted(m["id"] for m in built["regions"]) == sorted(w.region.id for w in written)


@pytest.mark.gpu
@pytest.mark.parametrize("task", TASKS)
def test_fused_rows_are_strictly_correct_on_the_gpu(task: str, eval_cache: Path, families_dir: Path) -> None:
    problem = load_problem(families_dir / task)
    _, written = by_rule(problem.source)
    built = assemble(problem_to_dict(problem), written)
    assert built["row_maps"], task
    program_strictly_correct(problem, built["code"], built["regions"], eval_cache, trials=10)
