"""Grouped and depthwise convolutions take the direct-convolution contract: c runs over the output
channel's own group (the accessor adds the group's first channel), so the plain loop over c and the taps
computes PyTorch's values (NVRTC compile, CPU emulation on the task shrunk)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluator.problem import load_problem
from regions.check import check
from regions.emulate import emulate, small_twin
from regions.offering import offered


@pytest.mark.parametrize("task, dims", [("15_Grouped_Conv_2d.py", 2), ("16_Depthwise_Conv_1d.py", 1)])
def test_the_loop_over_a_groups_channels_computes_the_convolution(
    task: str, dims: int, families_dir: Path
) -> None:
    problem = load_problem(families_dir / "level1" / task)
    ((region, contract),) = offered(problem.source, "moderate")[0]
    x, w, bias = (t.name for t in region.inputs)
    taps = ", ".join(f"k{j}" for j in range(dims))
    loops = "\n".join(f"for (int64_t k{j} = 0; k{j} < K{j}; ++k{j})" for j in range(dims))
    body = (
        f"float acc = {bias}[o];\nfor (int64_t c = 0; c < C; ++c)\n{loops}\n"
        f"    acc += {x}(c, {taps}) * {w}(c, {taps});\nresult = acc;"
    )
    assert "input channels of channel o's group" in contract.facts
    compiled = check(contract, body)
    assert compiled.ok, compiled.errors
    small = small_twin(problem.source, region)
    assert small is not None and emulate(*small, body).ok
    wrong = body.replace("c < C", "c < C - 1")
    assert not emulate(*small, wrong).ok
