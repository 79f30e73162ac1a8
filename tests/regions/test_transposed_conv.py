"""Transposed convolutions take the direct-convolution contract: the accessor reads the input element a
tap carries onto this output (0 between strides and past the edges), so the plain loop over c and the
taps computes PyTorch's values (NVRTC compile, CPU emulation) for strides, padding, output padding,
dilation and groups in 1-3D; a loop that forgets the filter's layout is caught."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluator.problem import load_problem, problem_from_source
from regions.check import check
from regions.emulate import emulate, small_twin
from regions.offering import offered

VARIANTS = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.ConvTranspose{dims}d(4, 6, {kernel}, {options})

    def forward(self, x):
        return self.up(x)


def get_inputs():
    return [torch.randn(2, 4, {size})]


def get_init_inputs():
    return []
"""
CASES = [
    (1, "3", "stride=3, padding=1, output_padding=2, groups=2", "9"),
    (1, "2", "dilation=2, bias=False", "7"),
    (2, "(3, 2)", "stride=(2, 1), padding=(1, 0), groups=2", "5, 4"),
    (3, "2", "stride=2", "3, 2, 3"),
]


def _loop(region, dims: int, bias: bool) -> str:
    x, w = (t.name for t in region.inputs[:2])
    taps = ", ".join(f"k{j}" for j in range(dims))
    loops = "\n".join(f"for (int64_t k{j} = 0; k{j} < K{j}; ++k{j})" for j in range(dims))
    start = f"{region.inputs[2].name}[o]" if bias else "0.0f"
    return (
        f"float acc = {start};\nfor (int64_t c = 0; c < C; ++c)\n{loops}\n"
        f"    acc += {x}(c, {taps}) * {w}(c, {taps});\nresult = acc;"
    )


def _checked(problem, dims: int, bias: bool) -> tuple[object, object, str]:
    ((region, contract),) = offered(problem.source, "aggressive")[0]
    body = _loop(region, dims, bias)
    compiled = check(contract, body)
    assert compiled.ok, compiled.errors
    small = small_twin(problem.source, region)
    assert small is not None
    return small, contract, body


@pytest.mark.parametrize(("dims", "kernel", "options", "size"), CASES)
def test_the_plain_loop_computes_every_transposed_convolution(
    dims: int, kernel: str, options: str, size: str
) -> None:
    source = VARIANTS.format(dims=dims, kernel=kernel, options=options, size=size)
    problem = problem_from_source(source, name=f"up{dims}")
    small, contract, body = _checked(problem, dims, "bias=False" not in options)
    assert "carries onto this output element" in contract.facts
    assert emulate(*small, body).ok


def test_the_family_task_and_a_wrong_filter_layout(families_dir: Path) -> None:
    problem = load_problem(families_dir / "level1/14_Transposed_Conv_2d_Stride.py")
    small, _, body = _checked(problem, 2, True)
    assert emulate(*small, body).ok
    x, w = (t.name for t in small[0].inputs[:2])
    swapped = body.replace(f"{w}(c, k0, k1)", f"{w}(c, K0 - 1 - k0, K1 - 1 - k1)")  # a direct conv's flip
    assert not emulate(*small, swapped).ok
