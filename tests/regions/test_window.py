"""The window loop kind: every pooling (max, average, adaptive; 1-3D; padding, dilation, ceil_mode,
count_include_pad, divisor_override) is a region whose skeleton places the window, so a plain loop over it
compiles under NVRTC and computes PyTorch's values (CPU emulation); a body that ignores the framework's
divisor does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluator.problem import load_problem, problem_from_source
from regions.check import check
from regions.contract import render
from regions.emulate import emulate
from regions.offering import offered
from regions.partition import partition
from regions.trace import trace_problem

POOLS = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.avg_ceil = nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)
        self.max3 = nn.MaxPool3d(2)
        self.adaptive1 = nn.AdaptiveAvgPool1d(5)
        self.dilated = nn.MaxPool1d(3, stride=1, padding=1, dilation=2)
        self.avg3 = nn.AvgPool3d(2)
        self.adaptive3 = nn.AdaptiveAvgPool3d((2, 3, 1))
        self.adaptive_max = nn.AdaptiveMaxPool2d(3)
        self.max_ceil = nn.MaxPool2d(2, stride=2, ceil_mode=True)

    def forward(self, x, y, z):
        parts = [
            self.avg_ceil(x), self.max3(y), self.adaptive1(z), self.dilated(z), self.avg3(y),
            self.adaptive3(y), self.adaptive_max(x), F.avg_pool2d(x, 2, divisor_override=3), self.max_ceil(x),
        ]
        return sum(p.sum() for p in parts)


def get_inputs():
    return [torch.randn(2, 3, 9, 9), torch.randn(2, 3, 4, 6, 6), torch.randn(2, 4, 17)]


def get_init_inputs():
    return []
"""

_LOOPS = {1: ("a",), 2: ("a", "b"), 3: ("a", "b", "c")}
_SIZES = {1: ("K",), 2: ("KH", "KW"), 3: ("KD", "KH", "KW")}


def _body(name: str, dims: int, is_max: bool) -> str:
    """A plain loop over the window folding each value into `result`, as the contract asks."""
    loops = "\n".join(
        f"for (int64_t {o} = 0; {o} < {s}; ++{o})" for o, s in zip(_LOOPS[dims], _SIZES[dims], strict=True)
    )
    at = f"{name}({', '.join(_LOOPS[dims])})"
    return f"{loops}\n    result = {f'fmaxf(result, {at})' if is_max else f'result + {at}'};"


def _windows() -> list:
    return [r for r in partition(trace_problem(problem_from_source(POOLS))) if r.kind == "window"]


def test_every_pooling_is_a_window_region() -> None:
    targets = sorted(r.steps[0].target.rsplit(".", 1)[-1] for r in _windows())
    assert targets == [
        "adaptive_avg_pool1d",
        "adaptive_avg_pool3d",
        "adaptive_max_pool2d",
        "avg_pool2d",
        "avg_pool2d",
        "avg_pool3d",
        "max_pool1d",
        "max_pool2d",
        "max_pool3d",
    ]


@pytest.mark.parametrize("index", range(9))
def test_a_loop_over_the_window_computes_the_pooling(index: int) -> None:
    region = _windows()[index]
    target = region.steps[0].target
    contract = render(region)
    body = _body(region.inputs[0].name, int(target[-2]), "max" in target)
    compiled = check(contract, body)
    assert compiled.ok, compiled.errors
    got = emulate(region, contract, body)
    assert got.ok, f"{target}: {got.error}"


def test_the_divisor_is_out_of_the_bodys_reach() -> None:
    """ceil_mode with count_include_pad=False: edge windows hold fewer than 9 inputs; the plain sum is
    right there (test above): the framework divides after the body, and a body that divides itself does
    not compile and is told why."""
    region = next(r for r in _windows() if "ceil_mode=True, count_include_pad=False" in r.steps[0].code)
    contract = render(region)
    assert "count" not in contract.head.split("float result")[1] and "result / count" in contract.tail
    got = check(contract, _body(region.inputs[0].name, 2, False) + "\nresult = result / count;")
    assert not got.ok and "`count` is the framework divides `result`" in got.errors


def test_a_loop_counter_left_undeclared_is_answered_with_its_loop() -> None:
    region = next(r for r in _windows() if "max_pool3d" in r.steps[0].target)
    got = check(render(region), f"result = fmaxf(result, {region.inputs[0].name}(a, b, c));")
    assert not got.ok and "write the loop `for (int64_t c = 0; c < KW; ++c)`" in got.errors


def test_a_project_pooling_task_is_offered_at_moderate(families_dir: Path) -> None:
    problem = load_problem(families_dir / "level1" / "1_Max_Pool_2d_Window.py")
    (chosen,), _ = offered(problem.source, "moderate")
    region, contract = chosen
    assert region.kind == "window" and contract.kind == "window"
    assert "auto x = [&](int64_t a, int64_t b) -> float" in contract.head and "-INFINITY" in contract.head
