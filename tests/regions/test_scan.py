"""Scans (cumsum, cumprod along any dim, reversed by flips around them): one thread per row, the running
value `carry` declared by the skeleton at its start value; a loop in order computes PyTorch's values (NVRTC
compile, CPU emulation on the task shrunk), and a wrong carry is caught."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluator.problem import load_problem
from regions.check import check
from regions.emulate import emulate, small_twin
from regions.offering import offered

TASKS = [
    "level1/4_Cumulative_Sum_Rows.py",
    "level1/5_Reverse_Cumulative_Product.py",
    "level2/2_Matmul_Cumsum_Scale.py",
]


def _scan(path: Path):
    problem = load_problem(path)
    chosen, _ = offered(problem.source, "moderate")
    ((region, contract),) = [
        (r, c) for r, c in chosen if r.steps[0].target in ("torch.cumsum", "torch.cumprod")
    ]
    return problem, region, contract


def _body(name: str, product: bool) -> str:
    fold = f"carry = carry {'*' if product else '+'} {name}(k);"
    return f"for (int64_t k = 0; k < R; ++k) {{\n    {fold}\n    out(k) = carry;\n}}"


@pytest.mark.parametrize("task", TASKS)
def test_a_loop_in_order_computes_the_scan(task: str, families_dir: Path) -> None:
    problem, region, contract = _scan(families_dir / task)
    product = region.steps[0].target == "torch.cumprod"
    assert f"float carry = {'1.0f' if product else '0.0f'};" in contract.head
    body = _body(region.inputs[0].name, product)
    compiled = check(contract, body)
    assert compiled.ok, compiled.errors
    small = small_twin(problem.source, region)
    assert small is not None and emulate(*small, body).ok


def test_a_scan_that_skips_its_first_element_is_caught(families_dir: Path) -> None:
    problem, region, _ = _scan(families_dir / TASKS[0])
    body = _body(region.inputs[0].name, False).replace("for (int64_t k = 0;", "for (int64_t k = 1;")
    got = emulate(*small_twin(problem.source, region), body)
    assert not got.ok and got.error.startswith("out[")
