"""Reductions over any set of dims (a batch norm's statistics over N, H and W; a group's elements), and the
variance's divisor owned by the skeleton: a plain loop compiles under NVRTC and computes PyTorch's values
(CPU emulation on the task shrunk); a body that divides by its own guess of the divisor is caught."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluator.problem import load_problem, problem_from_source
from regions.check import check
from regions.emulate import emulate, small_twin
from regions.offering import contracted, cut, offered
from regions.skeleton import c_names
from regions.trace import trace_problem

MEAN = "for (int64_t k = 0; k < R; ++k) result += x(k);"  # the framework divides
SPREAD = "for (int64_t k = 0; k < R; ++k) {\n    const float d = x(k) - row_mean;\n    result += d * d;\n}"
VARIANCES = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        a = torch.var(x, dim=(1, 3), keepdim=True)
        return a + torch.std(x, dim=[0, 2], keepdim=True).sum() + x.sum(dim=(0, 3)).mean()


def get_inputs():
    return [torch.randn(3, 5, 4, 6)]


def get_init_inputs():
    return []
"""


def _region(problem, target: str):
    """The statistic's region apart from the steps after it (conservative's cut: moderate fuses a norm's
    `+ eps` and rsqrt into its variance, whose fold is then the framework's)."""
    fit, _ = contracted(cut(trace_problem(problem), "conservative"))
    return next((r, c) for r, c in fit if r.steps[0].target == target)


def _reading(region, body: str) -> str:
    """The body with its accessor named after the region's input (x, or a rewrite's t0)."""
    return body.replace("x(k)", f"{c_names(region)[region.inputs[0].name]}(k)")


def _emulates(problem, region, body: str) -> bool:
    small = small_twin(problem.source, region, "conservative")
    assert small is not None
    return emulate(*small, body).ok


@pytest.mark.parametrize(
    ("task", "target", "body"),
    [
        ("level1/10_Batch_Norm_Training_Stats.py", "torch.mean", MEAN),
        ("level1/10_Batch_Norm_Training_Stats.py", "torch.var", SPREAD),
        ("level1/9_Group_Norm_Four_Groups.py", "torch.var", SPREAD),
    ],
)
def test_a_plain_loop_computes_the_statistic(task: str, target: str, body: str, families_dir: Path) -> None:
    problem = load_problem(families_dir / task)
    region, contract = _region(problem, target)
    body = _reading(region, body)
    assert check(contract, body).ok
    assert _emulates(problem, region, body)


def test_strided_dims_and_the_divisor_per_correction() -> None:
    problem = problem_from_source(VARIANCES, name="variances")
    var, contract = _region(problem, "torch.var")
    assert "% " in contract.head and "spread_divisor = 29.0;" in contract.head  # 5 x 6 elements, unbiased
    assert _emulates(problem, var, SPREAD)
    assert not _emulates(problem, var, SPREAD.replace("x(k) - row_mean", "x(k)"))  # no mean subtracted
    std, _ = _region(problem, "torch.std")
    assert _emulates(problem, std, SPREAD)  # the framework takes the root
    chosen, _ = offered(problem.source, "moderate")
    (total,) = [r for r, _ in chosen if "dim=(0, 3)" in r.steps[0].code]  # dims 0 and 3 of x: two strides
    assert _emulates(problem, total, MEAN)


def test_a_mean_divided_by_the_body_is_divided_twice(families_dir: Path) -> None:
    """The framework owns the division: a body that divides as well is caught."""
    problem = load_problem(families_dir / "level1/10_Batch_Norm_Training_Stats.py")
    mean, contract = _region(problem, "torch.mean")
    assert "p_out[i] = (float)(result / R);" in contract.tail
    assert _emulates(problem, mean, MEAN)
    assert not _emulates(problem, mean, MEAN + "\nresult /= R;")


INDICES = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.argmin(x) + torch.argmax(x, dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(7, 33, 5)]


def get_init_inputs():
    return []
"""
KEEP = "for (int64_t k = 0; k < R; ++k)\n    if (x(k) {better} best) {{ best = x(k); index = k; }}"


def test_index_reductions_keep_the_first_best_and_write_int64() -> None:
    problem = problem_from_source(INDICES, name="indices")
    argmin, contract = _region(problem, "torch.argmin")
    assert "int64_t* __restrict__ p_out" in contract.signature and "p_out[i] = index;" in contract.tail
    assert contract.launch["output_dtype"] == "int64"
    assert check(contract, KEEP.format(better="<")).ok
    assert _emulates(problem, argmin, KEEP.format(better="<"))
    assert not _emulates(problem, argmin, KEEP.format(better=">"))  # the largest is not the smallest
    argmax, _ = _region(problem, "torch.argmax")  # over dim 1 of three: a strided row
    assert _emulates(problem, argmax, KEEP.format(better=">"))


LAYER_NORM = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm((6, 5), eps=1e-3)

    def forward(self, x):
        return self.norm(x * 2.0)


def get_inputs():
    return [torch.randn(4, 3, 6, 5)]


def get_init_inputs():
    return []
"""


def test_a_layer_norm_body_is_one_line_over_the_skeletons_statistics() -> None:
    problem = problem_from_source(LAYER_NORM, name="layer_norm")
    region, contract = _region(problem, "torch.nn.functional.layer_norm")
    assert "rsqrtf((float)(kg_squares / R) + 0.001f)" in contract.head
    x, w, b = (c_names(region)[t.name] for t in region.inputs)
    body = f"out(k) = ({x}(k) - row_mean) * row_rstd * {w}(k) + {b}(k);"
    assert check(contract, body).ok
    assert _emulates(problem, region, body)
    assert not _emulates(problem, region, body.replace(" + ", " - "))
