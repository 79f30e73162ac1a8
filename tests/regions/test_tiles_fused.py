"""The blocked shape of a product fused with its epilogue (regions.blocked_tiles.blocked_fused): the framework
sums each output on the register-blocked staging, and the body written on the first fused contract (the
epilogue's steps from `result`) runs unchanged once per output. On the CPU the launch's blocks run as
host threads that meet at __syncthreads (regions.emulate); on the GPU, the project's own fused product
tasks at full size (benchmarks/product_tasks)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from one_op import strictly_correct_on_gpu

from evaluator.problem import load_problem
from regions.blocked_tiles import BLOCK_K, FILL, PER, PER_LONG, RUN_SLICES, blocked_fused
from regions.emulate import emulate
from regions.export import Written
from regions.model import RegionError
from regions.offering import offered
from regions.reduce import LONG_SUM
from regions.rules import rule_body
from regions.shapes import BLOCKED, BLOCKED_FUSED, SPLIT, ruled_launch
from regions.tiles import TILE

PRODUCT_TASKS = Path(__file__).resolve().parents[2] / "benchmarks" / "product_tasks"

# (the module's init lines, the forward over its inputs, get_inputs' list): each product the shape fuses
CASES = [
    ("self.fc = nn.Linear(40, 136)", "torch.relu((self.fc(a) - 0.5) * 2.0)", "torch.randn(130, 40)"),
    ("self.w = nn.Parameter(torch.randn(24, 140))", "torch.tanh(a @ self.w)", "torch.randn(131, 24)"),
    ("pass", "torch.sigmoid(torch.bmm(a, b))", "torch.randn(2, 129, 17), torch.randn(2, 17, 130)"),
    (
        "self.fc = nn.Linear(20, 140, bias=False)",
        "F.gelu(self.fc(a)) * self.s",
        "torch.randn(3, 50, 20)",
    ),
    (
        f"self.fc = nn.Linear({LONG_SUM + 40}, 130)",
        "torch.clamp(self.fc(a), -1.0, 1.0)",
        f"torch.randn(129, {LONG_SUM + 40})",
    ),
]


def _source(init: str, forward: str, inputs: str) -> str:
    args = "a, b" if inputs.count("torch.randn") == 2 else "a"
    return (
        "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\nclass Model(nn.Module):\n"
        f"    def __init__(self):\n        super().__init__()\n        {init}\n        self.s = 0.75\n\n"
        f"    def forward(self, {args}):\n        return {forward}\n\n\n"
        f"def get_inputs():\n    return [{inputs}]\n\n\ndef get_init_inputs():\n    return []\n"
    )


def _product(case: tuple[str, str, str]):
    """The problem's product region, fused with its epilogue at aggressive ambition, and its first
    contract."""
    (part,) = [(r, c) for r, c in offered(_source(*case), "aggressive")[0] if r.kind == "contraction"]
    return part


@pytest.mark.parametrize("case", CASES, ids=["linear", "matmul", "bmm", "batched-linear", "long-k"])
def test_the_rules_epilogue_moves_to_the_blocked_product_and_computes_it(case: tuple[str, str, str]) -> None:
    region, first = _product(case)
    assert len(region.steps) > 1  # the epilogue is fused into the product's region
    body = rule_body(region, first)
    ruled = ruled_launch(region, body)
    assert ruled is not None and ruled[0] == BLOCKED_FUSED
    grid = ruled[1].launch["grid"]
    assert grid[0] * grid[1] * grid[2] > 1  # several blocks, each staging its own slices
    emulated = emulate(region, ruled[1], body)
    assert emulated.ok, emulated.error


def test_a_long_sum_runs_in_float_runs_that_join_the_totals() -> None:
    """K past LONG_SUM keeps float sums, in runs of RUN_SLICES slices added into the totals; a last,
    shorter run that never joins them is caught."""
    region, first = _product(CASES[-1])
    contract = blocked_fused(region)
    assert "float kg_run[4][4];" in contract.head and "double" not in contract.head
    body = rule_body(region, first)
    assert emulate(region, contract, body).ok
    ends = f" || k0 + {BLOCK_K} >= K_END"
    assert ends in contract.head and (LONG_SUM + 40) % (BLOCK_K * RUN_SLICES) != 0
    lost = replace(contract, head=contract.head.replace(ends, ""))
    assert not emulate(region, lost, body).ok


@pytest.mark.parametrize(
    "rows, per", [(TILE * PER * 12, PER), (TILE * PER * 4, PER_LONG)], ids=["8x8", "4x4"]
)
def test_a_thread_owns_eight_by_eight_outputs_where_the_blocks_fill_the_gpu(rows: int, per: int) -> None:
    """Where 8 x 8 outputs a thread leave fewer than FILL blocks, a thread owns 4 x 4 (four times the
    blocks)."""
    source = (f"self.fc = nn.Linear(64, {rows})", "torch.relu(self.fc(a))", f"torch.randn({rows}, 64)")
    region, _ = _product(source)
    contract = blocked_fused(region)
    grid = contract.launch["grid"]
    assert f"float kg_total[{per}][{per}];" in contract.head
    assert grid[0] * grid[1] * grid[2] == (rows // (TILE * per)) ** 2
    assert (per == PER) == ((rows // (TILE * PER)) ** 2 >= FILL)


def test_a_wrong_epilogue_is_caught_on_the_cpu() -> None:
    region, first = _product(CASES[0])
    body = rule_body(region, first)
    assert "fmaxf" in body or "relu" in body
    wrong = body.replace("0.5f", "0.25f") if "0.5f" in body else body.replace("2.0f", "3.0f")
    assert wrong != body
    assert not emulate(region, blocked_fused(region), wrong).ok


def test_products_too_narrow_or_unfused_say_why() -> None:
    narrow, _ = _product(("self.fc = nn.Linear(40, 60)", "torch.relu(self.fc(a))", "torch.randn(300, 40)"))
    with pytest.raises(RegionError, match="fills no 64 x 64 tile"):
        blocked_fused(narrow)
    alone = offered(
        _source("self.fc = nn.Linear(40, 136)", "self.fc(a)", "torch.randn(130, 40)"), "aggressive"
    )
    (region,) = [r for r, _ in alone[0] if r.kind == "contraction"]
    with pytest.raises(RegionError, match="fused with its epilogue"):
        blocked_fused(region)


@pytest.mark.parametrize(
    "features, outputs, rows, shape",
    [(40, 136, 130, BLOCKED), (LONG_SUM + 40, 130, 129, SPLIT)],
    ids=["blocked", "split"],
)
def test_a_lone_linear_layers_bias_is_the_frameworks_on_every_launch(
    features: int, outputs: int, rows: int, shape: str
) -> None:
    """The body sums the product alone; the framework adds the bias as it stores each output (split: the
    run from k = 0 alone), on the first contract and on the shapes that sum K in slices."""
    source = _source(
        f"self.fc = nn.Linear({features}, {outputs})", "self.fc(a)", f"torch.randn({rows}, {features})"
    )
    ((region, first),) = [(r, c) for r, c in offered(source, "aggressive")[0] if r.kind == "contraction"]
    assert len(region.inputs) == 3 and "leave it out" in first.facts
    body = rule_body(region, first)
    ruled = ruled_launch(region, body)
    assert ruled is not None and ruled[0] == shape
    for contract in (first, ruled[1]):
        emulated = emulate(region, contract, body)
        assert emulated.ok, emulated.error
    short = body.replace("k < K", "k < K - 1")  # a term short: caught on the shape
    assert short != body and not emulate(region, ruled[1], short).ok


@pytest.mark.gpu
@pytest.mark.parametrize("task", sorted(p.name for p in (PRODUCT_TASKS / "level2").glob("*.py")))
def test_the_product_tasks_are_strictly_correct_on_the_blocked_shapes(task: str, eval_cache: Path) -> None:
    problem = load_problem(PRODUCT_TASKS / "level2" / task)
    written = []
    for region, first in offered(problem.source, "aggressive")[0]:
        body = rule_body(region, first)
        ruled = ruled_launch(region, body)
        if region.kind == "contraction":
            assert ruled is not None and ruled[0] in (BLOCKED_FUSED, BLOCKED, SPLIT), task
        written.append(Written(region, ruled[1] if ruled else first, body))
    strictly_correct_on_gpu(problem, written, eval_cache, trials=5)
