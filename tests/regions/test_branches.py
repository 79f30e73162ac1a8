"""Data-dependent control flow (regions.branches): every path traced, the paths merged into one graph that
computes each branch and selects the taken one's result, so each branch's ops are regions; sizes decide
statically; a branch that mutates, or a condition read as a Python number, is refused with its reason."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from evaluator.problem import load_problem, problem_from_dict
from regions.model import RegionError
from regions.offering import offered
from regions.trace import graph_module, load_module, trace_problem

TEMPLATE = """
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
{body}

def get_inputs():
    return [torch.randn(8, 4)]

def get_init_inputs():
    return []
"""
NESTED = """        if x.mean() > 0:
            if x.amax() > 2.0:
                return x * 3.0
            return x + 1.0
        return torch.tanh(x)"""


def _problem(body: str):
    return problem_from_dict(
        {"name": "branchy", "level": 0, "problem_id": 0, "source": TEMPLATE.format(body=body)}
    )


def _real_graph(problem, inputs: list[torch.Tensor]) -> tuple[torch.nn.Module, torch.fx.GraphModule]:
    module = load_module(problem)
    model = module.Model(*module.get_init_inputs())
    return model, graph_module(model, inputs)


def test_both_branches_of_the_family_task_are_regions_and_the_graph_takes_the_right_one(
    families_dir: Path,
) -> None:
    problem = load_problem(families_dir / "level3/3_Branch_On_Data.py")
    chosen, _ = offered(problem.source, "moderate")
    assert [[s.target for s in r.steps] for r, _ in chosen] == [
        ["torch.mean"],
        ["torch.relu"],
        ["torch.tanh"],
    ]
    torch.manual_seed(0)
    x = torch.randn(16, 64)
    model, gm = _real_graph(problem, [x])
    for sample in (x - x.mean() + 0.25, x - x.mean() - 0.25):  # one input per branch
        torch.testing.assert_close(gm(sample), model(sample), rtol=0, atol=0)


def test_nested_conditions_select_among_three_paths() -> None:
    problem = _problem(NESTED)
    assert "torch.where" in trace_problem(problem).gm.code
    x = torch.randn(8, 4)
    model, gm = _real_graph(problem, [x])
    base = x - x.mean()
    samples = [base / base.abs().amax() - 0.5, base / base.abs().amax() + 0.5, base + 3.0]
    assert [model(s).equal(s * 3.0) for s in samples] == [False, False, True]  # every path taken once
    for sample in samples:
        torch.testing.assert_close(gm(sample), model(sample), rtol=0, atol=0)


def test_a_condition_on_sizes_keeps_only_the_path_the_sizes_take() -> None:
    traced = trace_problem(
        _problem("        if x.shape[0] > 2:\n            return x * 2\n        return x - 1")
    )
    code = traced.gm.code
    assert "x * 2" in code and "torch.where" not in code and "x - 1" not in code


def test_a_branch_that_changes_a_tensor_in_place_is_refused() -> None:
    body = "        if x.mean() > 0:\n            x.mul_(2.0)\n        return x + 1"
    with pytest.raises(RegionError, match=r"in place \(mul_\)"):
        trace_problem(_problem(body))


def test_a_condition_read_as_a_python_number_is_refused_with_the_reason() -> None:
    with pytest.raises(RegionError, match="item"):
        trace_problem(_problem("        if x.sum().item() > 0:\n            return x * 2\n        return x"))


def test_too_many_paths_are_refused() -> None:
    body = (
        "".join(f"        if x[{i}].sum() > 0:\n            x = x + {i}\n" for i in range(4))
        + "        return x"
    )
    with pytest.raises(RegionError, match="more than 8 paths"):
        trace_problem(_problem(body))
