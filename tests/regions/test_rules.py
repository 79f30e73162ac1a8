"""The no-model writer (regions.rules): the framework's own body for each region kind passes the local
checks (lint + NVRTC) and computes the region's PyTorch lines in the CPU emulation (the task shrunk)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluator.problem import load_problem
from regions.check import check
from regions.emulate import emulate, small_twin
from regions.model import Region, Step, TensorInfo
from regions.offering import offered
from regions.rules import rule_body
from regions.skeleton import c_names

# one family task per kind and form: windows, a scan, an index reduction, folds over strided dims, a
# variance, a softmax, a layer norm, grouped and transposed convolutions, losses' maps and means
TASKS = [
    "level1/1_Max_Pool_2d_Window.py",
    "level1/2_Average_Pool_1d_Stride.py",
    "level1/3_Adaptive_Average_Pool_Global.py",
    "level1/5_Reverse_Cumulative_Product.py",
    "level1/6_Argmax_Over_Channels.py",
    "level1/9_Group_Norm_Four_Groups.py",
    "level1/12_Huber_Loss_Mean.py",
    "level1/14_Transposed_Conv_2d_Stride.py",
    "level1/15_Grouped_Conv_2d.py",
    "level1/18_Selu_Activation.py",
    "level2/3_Causal_Attention_Sliced_Mask.py",
    "level1/22_LogSumExp_Rows.py",
    "level1/25_Cosine_Similarity_Loss.py",
    "level1/28_Max_Pool_3d.py",
    "level1/32_Diagonal_Times_Matrix.py",
    "level1/36_Argmin_Last_Dim.py",
    "level2/4_Gemm_GroupNorm_Swish.py",
]


@pytest.mark.parametrize("task", TASKS)
def test_the_rule_bodies_compile_and_compute_the_region(task: str, families_dir: Path) -> None:
    problem = load_problem(families_dir / task)
    chosen, _ = offered(problem.source, "moderate")
    for region, contract in chosen:
        body = rule_body(region, contract)
        assert body is not None, region.steps
        assert check(contract, body).ok, (region.id, body, check(contract, body).errors)
        small = small_twin(problem.source, region)
        assert small is not None and emulate(*small, body).ok, (region.id, body)


def test_an_input_named_like_a_skeleton_local_is_renamed(families_dir: Path) -> None:
    """`torch.diag(d) @ m`: the product's skeleton counts rows in `m`, so the input's accessor is `v_m`."""
    problem = load_problem(families_dir / "level1/32_Diagonal_Times_Matrix.py")
    ((region, contract),) = offered(problem.source, "moderate")[0]
    assert c_names(region)["m"] == "v_m" and "auto v_m = [&]" in contract.head
    assert check(contract, rule_body(region, contract)).ok


def _t(name: str) -> TensorInfo:
    return TensorInfo(name, (4,), "float32")


def test_each_pointwise_op_is_one_line_and_an_unknown_op_gets_no_body() -> None:
    steps = [
        Step(_t("t0"), "torch.nn.functional.gelu", ("x",), (("approximate", "tanh"),)),
        Step(_t("t1"), "torch.clamp", ("t0",), (("min", 0.5),)),
        Step(_t("t2"), "torch.pow", ("t1", "2")),
    ]
    region = Region("r0", "map", ["t0", "t1", "t2"], [_t("x")], steps[-1].out, steps)
    assert rule_body(region, None) == (  # type: ignore[arg-type]
        "float t1 = kg_gelu_tanh(x);\nfloat t2 = fmaxf(t1, 0.5f);\nfloat t3 = t2 * t2;"
    )
    odd = Region("r0", "map", ["t0"], [_t("x")], _t("t0"), [Step(_t("t0"), "torch.polygamma", ("x",))])
    assert rule_body(odd, None) is None  # type: ignore[arg-type]
