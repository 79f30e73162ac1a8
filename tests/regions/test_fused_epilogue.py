"""Aggressive ambition: a product and its pointwise epilogue in one region, its contract compiled by NVRTC and
emulated on the CPU; products no fused contract fits keep their epilogue apart."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluator.problem import load_problem, load_problems, problem_from_source, shrink_problem
from regions.__main__ import main
from regions.check import check
from regions.emulate import emulate
from regions.offering import choose, contracted, cut
from regions.partition import partition
from regions.rules import rule_body
from regions.trace import trace_problem

SHARED_PRODUCT = """
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 8)

    def forward(self, x):
        y = self.fc(x)
        return torch.relu(y) + y

def get_inputs():
    return [torch.randn(4, 16)]

def get_init_inputs():
    return []
"""

# the model's part of a fused product: the steps after the framework's sum
LINEAR_EPILOGUE = """float t1 = result - 2.0f;
float t2 = t1 * 1.5f;
float t3 = kg_relu(t2);"""

CONV_EPILOGUE = """float t1 = result + conv_bias_view;
float t2 = kg_relu(t1);
float t3 = t2 + bias;"""


def _problem(kernelbench_dir: Path, level: int, pid: int, cap: int | None = None):
    problem = next(iter(load_problems(kernelbench_dir / f"level{level}", ids=[pid])))
    return shrink_problem(problem, cap=cap) if cap else problem


def test_aggressive_fuses_the_epilogue_into_its_product(kernelbench_dir: Path) -> None:
    traced = trace_problem(_problem(kernelbench_dir, 2, 1))
    # the convolution's own bias is an add after it (regions.decompose.bias_apart), viewed by channel
    assert [r.kind for r in partition(traced)] == ["contraction", "kept", "map"]
    view, fused = cut(traced, "aggressive")
    assert view.kind == "kept" and fused.kind == "contraction"
    assert [s.target.rsplit(".", 1)[-1] for s in fused.steps] == ["conv2d", "add", "relu", "add"]
    assert [t.name for t in fused.inputs] == ["x", "conv_weight", "conv_bias_view", "bias"]
    assert fused.output == traced.output
    assert cut(traced, "moderate") == partition(traced)  # a product's epilogue fuses at aggressive only


def test_a_product_read_twice_keeps_its_epilogue_apart() -> None:
    traced = trace_problem(problem_from_source(SHARED_PRODUCT, name="shared_product"))
    assert [r.kind for r in cut(traced, "aggressive")] == ["contraction", "map"]


def test_an_epilogue_reading_the_products_own_operand_stays_apart(families_dir: Path) -> None:
    """`x + hardswish(conv(x))`: the convolution's skeleton reads x along its loops, so the residual's x
    cannot be read at the output element in the same kernel: the bias and hardswish fuse, the sum with x
    is a map after it, and both compile."""
    problem = load_problem(families_dir / "level2/9_Conv_Hardswish_Residual.py")
    fit, _ = contracted(cut(trace_problem(problem), "aggressive"))
    chosen = choose(fit, "aggressive")
    assert [(r.kind, len(r.steps)) for r, _ in chosen] == [("contraction", 3), ("map", 1)]
    for region, contract in chosen:
        assert check(contract, rule_body(region, contract)).ok, region.id


ADDMM = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, b, x, w):
        return torch.relu(torch.addmm(b, x, w)) * 2.0


def get_inputs():
    return [torch.randn(8), torch.randn(4, 6), torch.randn(6, 8)]


def get_init_inputs():
    return []
"""


def test_a_product_without_a_fused_contract_leaves_its_epilogue_a_map() -> None:
    """addmm has no skeleton: fused, nothing would be writable; apart, the map is."""
    traced = trace_problem(problem_from_source(ADDMM, name="addmm"))
    fit, unfit = contracted(cut(traced, "aggressive"))
    assert [(r.kind, len(r.steps)) for r, _ in choose(fit, "aggressive")] == [("map", 2)]
    assert len(unfit) == 1 and "addmm" in unfit[0]


def test_a_transposed_convolution_fuses_its_epilogue(kernelbench_dir: Path) -> None:
    traced = trace_problem(_problem(kernelbench_dir, 2, 2))
    fit, unfit = contracted(cut(traced, "aggressive"))
    assert [(r.kind, len(r.steps)) for r, _ in choose(fit, "aggressive")] == [("contraction", 7)]
    assert unfit == []


def test_fused_contract_reads_result_then_the_epilogue_steps(kernelbench_dir: Path) -> None:
    (region,) = cut(trace_problem(_problem(kernelbench_dir, 2, 9)), "aggressive")
    ((_, contract),), _ = contracted([region])
    assert "result = torch.nn.functional.linear(x, linear_weight, linear_bias)\nt1 = result - 2.0" in (
        contract.facts
    )
    assert "// then one line per step, in order:\n        // t1 = result - 2.0" in contract.head
    assert contract.tail.startswith("        p_out[i] = t3;")
    assert contract.launch["inputs"] == ["x", "linear_weight", "linear_bias"]
    assert check(contract, LINEAR_EPILOGUE).ok
    missing = check(contract, LINEAR_EPILOGUE.rsplit("\n", 1)[0])
    assert not missing.ok and "t3" in missing.errors


def test_fused_kernels_compute_the_reference_on_the_cpu(kernelbench_dir: Path) -> None:
    for (level, pid), body, wrong in (
        ((2, 9), LINEAR_EPILOGUE, ("t1 * 1.5f", "t1 * 2.5f")),
        ((2, 1), CONV_EPILOGUE, ("t2 + bias", "t2 - bias")),
    ):
        (region,) = [
            r
            for r in cut(trace_problem(_problem(kernelbench_dir, level, pid, cap=8)), "aggressive")
            if r.kind != "kept"
        ]
        ((_, contract),), _ = contracted([region])
        assert region.steps[0].target.endswith(("linear", "conv2d"))
        assert emulate(region, contract, body).ok, (level, pid)
        bad = emulate(region, contract, body.replace(*wrong))
        assert not bad.ok and "PyTorch gives" in bad.error, (level, pid)


def test_cli_shows_the_fused_region_and_what_is_left_to_pytorch(
    kernelbench_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "1_Addmm_Relu.py"
    path.write_text(ADDMM)
    assert main(["show", str(path), "--ambition", "aggressive"]) == 0
    out = capsys.readouterr().out
    assert "offered at aggressive: r1" in out and "left to PyTorch, no contract fits: r0:" in out
    path = next((kernelbench_dir / "level2").glob("9_*.py"))
    assert main(["show", str(path), "--ambition", "aggressive", "--contract"]) == 0
    out = capsys.readouterr().out
    assert "1 regions; offered at aggressive: r0" in out
    assert "double result = p_linear_bias[j];\n" in out  # the sum is the framework's, in double: K = 8192
    assert "result += x(k) * linear_weight(k);  // the sum" in out


@pytest.mark.gpu
def test_a_fused_kernel_is_strictly_correct_on_the_gpu(kernelbench_dir: Path, eval_cache: Path) -> None:
    """Level 2's problem 9 at KernelBench's sizes: the fused kernel through the region kind's export, judged
    whole and alone (its region check runs the four PyTorch lines it replaces)."""
    from evaluator.api import evaluate_many
    from evaluator.config import EvalConfig
    from evaluator.jobs import Job
    from regions.export import Written, export_program, region_markers

    problem = _problem(kernelbench_dir, 2, 9)
    ((region, contract),), _ = contracted(cut(trace_problem(problem), "aggressive"))
    written = [Written(region, contract, LINEAR_EPILOGUE)]
    source = export_program(problem, written, "nvrtc")
    job = Job("fused", problem, source, code=source, extracted=True, regions=region_markers(written))
    config = EvalConfig(backend="cuda", cache_dir=str(eval_cache), reference_compile="off", timing_trials=3)
    (verdict,) = evaluate_many([job], config)
    assert verdict["verdict"] == "correct", (verdict["evidence"], verdict["log_tail"][-2000:])
    assert [r["verdict"] for r in verdict["evidence"]["regions"]] == ["correct"]
    assert verdict["evidence"]["custom"]["replaced"]


@pytest.mark.gpu
def test_fused_windows_and_reductions_are_strictly_correct_on_the_gpu(
    kernelbench_dir: Path, eval_cache: Path
) -> None:
    """Level 2's problem 10 at KernelBench's sizes: the max pool with its hardtanh and the mean with its
    tanh, each one kernel with its body by rule, the transposed convolution left to PyTorch; judged whole
    and each kernel alone against the PyTorch lines it replaces."""
    from evaluator.api import evaluate_many
    from evaluator.config import EvalConfig
    from evaluator.jobs import Job
    from regions.export import Written, export_program, region_markers

    problem = _problem(kernelbench_dir, 2, 10)
    written = [
        Written(region, contract, rule_body(region, contract) or "")
        for region, contract in contracted(cut(trace_problem(problem), "aggressive"))[0]
        if region.kind != "contraction"
    ]
    assert [(w.region.kind, len(w.region.steps)) for w in written] == [("window", 2), ("reduce", 2)]
    source = export_program(problem, written, "nvrtc")
    job = Job("fused_folds", problem, source, code=source, extracted=True, regions=region_markers(written))
    config = EvalConfig(backend="cuda", cache_dir=str(eval_cache), reference_compile="off", timing_trials=3)
    (verdict,) = evaluate_many([job], config)
    assert verdict["verdict"] == "correct", (verdict["evidence"], verdict["log_tail"][-2000:])
    assert [r["verdict"] for r in verdict["evidence"]["regions"]] == ["correct", "correct"]


POOL_CHAIN = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, x, y):
        a = torch.clamp(F.max_pool2d(x, 2), -0.5, 0.5)
        b = torch.tanh(torch.mean(a, dim=(2, 3), keepdim=True))
        c = F.gelu(F.avg_pool2d(y, 3, stride=2, padding=1)) * 2.0
        return b + c


def get_inputs():
    return [torch.randn(2, 3, 8, 10), torch.randn(2, 3, 9, 9)]


def get_init_inputs():
    return []
"""

MAX_THEN_CLAMP = "float t1 = kg_clamp(result, -0.5f, 0.5f);"
MEAN_THEN_TANH = "float t1 = kg_tanh(reduced);"
AVERAGE_THEN_GELU = "float t1 = kg_gelu(pooled);\nfloat t2 = t1 * 2.0f;"


def test_windows_and_reductions_fuse_the_maps_after_them() -> None:
    """Moderate and aggressive: each pooling and the mean take the pointwise steps that read them;
    conservative keeps them apart. The fold is the framework's, the body the steps; an average's and a
    mean's steps read the finished value (the framework divides)."""
    traced = trace_problem(problem_from_source(POOL_CHAIN, name="pool_chain"))
    apart = [(r.kind, len(r.steps)) for r in cut(traced, "conservative")]
    assert apart == [("window", 1), ("map", 1), ("reduce", 1), ("window", 1), ("map", 4)]
    assert cut(traced, "moderate") == cut(traced, "aggressive")
    fit, unfit = contracted(cut(traced, "moderate"))
    fused = [("window", 2), ("reduce", 2), ("window", 3), ("map", 1)]
    assert [(r.kind, len(r.steps)) for r, _ in fit] == fused and unfit == []
    (_, pool), (_, mean), (_, average), _ = fit
    assert "result = fmaxf(result, x(a, b));" in pool.head and pool.tail.startswith("        p_out[i] = t1;")
    assert "for (int64_t k = 0; k < R; ++k) result += v_t1(k);" in mean.head
    assert "const float reduced = (float)(result / R);" in mean.head
    assert "// t1 = torch.tanh(reduced)" in mean.head
    assert "const float pooled = result / (" in average.head
    assert average.hints == {} and average.tail.startswith("        p_out[i] = t2;")
    assert (pool.reads, mean.reads, average.reads) == ([], [], [])  # the framework's fold reads the input


def test_fused_windows_and_reductions_compute_the_reference_on_the_cpu() -> None:
    traced = trace_problem(problem_from_source(POOL_CHAIN, name="pool_chain"))
    fit, _ = contracted(cut(traced, "aggressive"))
    for (region, contract), body, wrong in zip(
        fit[:3],
        (MAX_THEN_CLAMP, MEAN_THEN_TANH, AVERAGE_THEN_GELU),
        (("0.5f)", "0.4f)"), ("reduced", "(float)result"), ("pooled", "result")),
        strict=True,
    ):
        assert check(contract, body).ok, region.id
        assert emulate(region, contract, body).ok, region.id
        bad = emulate(region, contract, body.replace(*wrong))
        assert not bad.ok and "PyTorch gives" in bad.error, region.id


def test_a_softmax_keeps_its_epilogue_apart() -> None:
    """A softmax writes its row, no one value: the map after it stays a region of its own."""
    source = POOL_CHAIN.replace(
        "torch.tanh(torch.mean(a, dim=(2, 3), keepdim=True))",
        "torch.mean(3.0 * torch.softmax(a, dim=1), dim=(2, 3), keepdim=True)",
    )
    traced = trace_problem(problem_from_source(source, name="softmax_chain"))
    fit, unfit = contracted(cut(traced, "aggressive"))
    assert [(r.kind, len(r.steps)) for r, _ in fit] == [
        ("window", 2), ("reduce", 1), ("map", 1), ("reduce", 1), ("window", 3), ("map", 1),
    ]  # fmt: skip
    assert unfit == []


def test_the_rules_write_fused_bodies(kernelbench_dir: Path) -> None:
    """The no-model writer covers fused regions too: the core's rule, then one line per epilogue step
    reading the core's value by the contract's name."""
    traced = trace_problem(problem_from_source(POOL_CHAIN, name="pool_chain"))
    fit, _ = contracted(cut(traced, "aggressive"))
    shrunk = _problem(kernelbench_dir, 2, 9, cap=8)
    fit += contracted(cut(trace_problem(shrunk), "aggressive"))[0]
    assert [len(r.steps) for r, _ in fit] == [2, 2, 3, 1, 4]
    for region, contract in fit:
        body = rule_body(region, contract)
        assert body is not None, region.id
        assert emulate(region, contract, body).ok, (region.id, body)
    assert rule_body(*fit[1]) == "float t1 = tanhf(reduced);"
