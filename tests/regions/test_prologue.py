"""Prologue fusion: a map whose only reader is a reduction runs inside the reduction's kernel. On the CPU the
fused kernels are built as host C++ and run against the two regions' PyTorch lines (the evaluator's own
emulation worker); on the GPU the assembled programs are judged by the evaluator as the region kind."""

from __future__ import annotations

from pathlib import Path

import pytest
from one_op import by_rule, program_strictly_correct

from evaluator.problem import load_problem, problem_from_source, problem_to_dict
from regions.assemble import assemble
from regions.emulate import emulate
from regions.prologue import absorb, fused_prologues

# small family tasks, one per reader skeleton: a fold with its epilogue (a norm's sqrt), a mean, a softmax's
# rows (each_row reads the map three times), a reduction over a strided middle dim, an index reduction's
# input (cross entropy's log_softmax)
TASKS = (
    "level1/82_Vector_Norm.py",
    "level1/46_MSE_Loss.py",
    "level1/45_Softmax_Temperature.py",
    "level1/20_RMS_Norm_Channels.py",
    "level1/11_Cross_Entropy_Logits.py",
)
SCALED_SUM = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, s: float):
        return torch.sum(torch.tanh(x) * s - x, dim=1)


def get_inputs():
    return [torch.randn(8, 64), 0.75]


def get_init_inputs():
    return []
"""
TWO_READERS = SCALED_SUM.replace(
    "return torch.sum(torch.tanh(x) * s - x, dim=1)",
    "y = torch.relu(x) * s\n        return torch.sum(y, dim=1) + torch.amax(y, dim=1)",
)


@pytest.mark.parametrize("task", TASKS)
def test_a_map_read_only_by_a_reduction_runs_in_its_kernel(task: str, families_dir: Path) -> None:
    source = (families_dir / task).read_text()
    traced, written = by_rule(source, ruled=False)
    fused = fused_prologues(traced, written)
    ((reader, maps),) = fused.into.items()
    (alone,) = fused.alone
    assert maps == [alone.region.id] and alone.region.kind == "map"
    (joined,) = [w for w in fused.program if w.region.id == reader]
    assert joined.region.steps[: len(alone.region.steps)] == alone.region.steps
    assert alone.region.output.name not in {t.name for t in joined.region.inputs}
    assert f"p_{alone.region.output.name}" not in joined.contract.signature
    got = emulate(joined.region, joined.contract, joined.body)
    assert got.ok, got.error


def test_the_fused_kernel_computes_the_maps_own_body(families_dir: Path) -> None:
    """A wrong map body makes the fused kernel wrong: the reduction reads the map's body, not its output."""
    traced, written = by_rule((families_dir / "level1/82_Vector_Norm.py").read_text(), ruled=False)
    square, norm = written
    wrong = absorb(norm, square._replace(body="float t1 = x * fabsf(x);"))
    assert wrong is not None
    assert not emulate(wrong.region, wrong.contract, wrong.body).ok


def test_a_scalar_of_the_map_becomes_an_argument_of_the_fused_kernel() -> None:
    traced, written = by_rule(SCALED_SUM, ruled=False)
    fused = fused_prologues(traced, written)
    (joined,) = fused.program
    assert joined.contract.launch["scalars"] == ["s"] and [t.name for t in joined.region.inputs] == ["x"]
    assert "float s, int64_t n)" in joined.contract.signature
    got = emulate(joined.region, joined.contract, joined.body)
    assert got.ok, got.error


def test_a_map_with_two_readers_keeps_its_kernel() -> None:
    traced, written = by_rule(TWO_READERS, ruled=False)
    assert [w.region.kind for w in written].count("reduce") == 2
    fused = fused_prologues(traced, written)
    assert fused.into == {} and fused.alone == [] and fused.program == written


def test_a_body_that_reads_the_maps_output_itself_stays_apart() -> None:
    traced, written = by_rule(SCALED_SUM, ruled=False)
    square, total = written
    pointer = "p_" + total.region.inputs[0].name
    own = total._replace(body=f"for (int64_t k = 0; k < R; ++k) result += {pointer}[base + k];")
    assert absorb(own, square) is None


def test_the_program_calls_the_fused_kernel_and_loads_the_map_for_its_own_check(families_dir: Path) -> None:
    problem = load_problem(families_dir / "level1/46_MSE_Loss.py")
    _, written = by_rule(problem.source)
    built = assemble(problem_to_dict(problem), written)
    apart = assemble(problem_to_dict(problem), written, fuse=False)
    assert built["prologues"] == {"r1": ["r0"]} and apart["prologues"] == {}
    forward = built["code"][built["code"].index("class ModelNew") :]
    assert "_kg_ext_r1.region_r1_launch(" in forward and "_kg_ext_r0" not in forward
    assert "_kg_ext_r0 = load_region_kernel(" in built["code"]
    markers = {m["id"]: m for m in built["regions"]}
    assert sorted(markers) == ["r0", "r1"]
    assert [s["target"] for s in markers["r1"]["spec"]["steps"]][-1] == "torch.mean"
    assert len(markers["r1"]["spec"]["steps"]) == len(written[0].region.steps) + len(written[1].region.steps)
    assert "_kg_ext_r0.region_r0_launch(" in apart["code"][apart["code"].index("class ModelNew") :]
    assert built["bodies"] == apart["bodies"]


def test_a_standalone_program_fuses_without_loading_the_map() -> None:
    problem = problem_from_source(SCALED_SUM, name="scaled_sum")
    _, written = by_rule(SCALED_SUM, ruled=False)
    built = assemble(problem_to_dict(problem), written, launcher="load_inline")
    assert built["prologues"] == {"r1": ["r0"]} and built["regions"] is None
    assert "_kg_ext_r0" not in built["code"] and "kg_map_r0(" in built["code"]


@pytest.mark.gpu
@pytest.mark.parametrize("task", TASKS)
def test_fused_programs_are_strictly_correct_on_the_gpu(
    task: str, eval_cache: Path, families_dir: Path
) -> None:
    problem = load_problem(families_dir / task)
    _, written = by_rule(problem.source)
    built = assemble(problem_to_dict(problem), written)
    assert built["prologues"], task
    program_strictly_correct(problem, built["code"], built["regions"], eval_cache, trials=10)


def test_show_says_which_map_runs_inside_which_reduction(
    families_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from regions.__main__ import main

    assert main(["show", str(families_dir / "level1/46_MSE_Loss.py"), "--ambition", "moderate"]) == 0
    out = capsys.readouterr().out
    assert "runs inside r1's kernel" in out
    assert main(["show", str(families_dir / "level1/46_MSE_Loss.py"), "--ambition", "conservative"]) == 0
    assert "runs inside" not in capsys.readouterr().out  # conservative offers the map alone
