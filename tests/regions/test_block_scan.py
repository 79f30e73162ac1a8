"""The block_scan shape (regions.block_scan): a cumsum or cumprod over long rows runs a block a row in
contiguous chunks, the first contract's body twice (the chunk's total, then from its carry); short rows
keep one thread a row. On the GPU it is strictly correct, along contiguous and strided rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluator.problem import problem_from_dict
from regions.block_scan import block_scan
from regions.check import check
from regions.export import Written, export_program, region_markers
from regions.model import RegionError
from regions.offering import choose, contracted, cut
from regions.rules import rule_body
from regions.shapes import BLOCK_SCAN, ruled_launch
from regions.trace import trace_problem


def _problem(expr: str, inputs: str):
    source = (
        "import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    def forward(self, x):\n"
        f"        return {expr}\n\n\ndef get_inputs():\n    return [{inputs}]\n\n\n"
        "def get_init_inputs():\n    return []\n"
    )
    return problem_from_dict({"name": "scan", "level": 0, "problem_id": 0, "source": source})


def _scan(problem):
    fit, _ = contracted(cut(trace_problem(problem), "moderate"))
    ((region, first),) = choose(fit, "moderate")
    return region, first


def test_a_long_cumsum_takes_a_block_a_row_and_runs_the_body_twice() -> None:
    region, first = _scan(_problem("torch.cumsum(x, dim=1)", "torch.randn(128, 4000)"))
    body = rule_body(region, first)
    shaped = block_scan(region)
    assert check(first, body).ok and check(shaped, body).ok
    assert shaped.launch["block"] == [256, 1, 1] and shaped.launch["grid"] == [128, 1, 1]
    assert (
        "kg_total[kg_t] = kg_scan(0.0f, false);" in shaped.tail
        and "kg_scan(kg_total[kg_t], true);" in shaped.tail
    )
    assert "kg_run = kg_run + kg_here;" in shaped.tail  # a sum's chunks add their totals
    assert ruled_launch(region, body)[0] == BLOCK_SCAN


def test_a_short_scan_keeps_one_thread_a_row() -> None:
    region, first = _scan(_problem("torch.cumprod(x, dim=-1)", "torch.randn(64, 100)"))
    with pytest.raises(RegionError, match="too short"):
        block_scan(region)
    assert ruled_launch(region, rule_body(region, first)) is None


@pytest.mark.gpu
@pytest.mark.parametrize(
    ("expr", "inputs"),
    [
        ("torch.cumsum(x, dim=1)", "torch.randn(128, 32768)"),  # chunks of 128
        ("torch.cumprod(x, dim=-1)", "1.0 + 0.001 * torch.randn(32, 5000)"),  # the last chunk short
        ("torch.cumsum(x, dim=0)", "torch.randn(6000, 48)"),  # rows along a stride
    ],
)
def test_block_scan_is_strictly_correct_on_the_gpu(eval_cache: Path, expr: str, inputs: str) -> None:
    from evaluator.api import evaluate_many
    from evaluator.config import EvalConfig
    from evaluator.jobs import Job

    problem = _problem(expr, inputs)
    region, first = _scan(problem)
    body = rule_body(region, first)
    name, shaped = ruled_launch(region, body)
    assert name == BLOCK_SCAN
    written = [Written(region, shaped, body)]
    source = export_program(problem, written, "nvrtc")
    job = Job("scan", problem, source, code=source, extracted=True, regions=region_markers(written))
    config = EvalConfig(backend="cuda", cache_dir=str(eval_cache), reference_compile="off", timing_trials=5)
    (verdict,) = evaluate_many([job], config)
    assert verdict["verdict"] == "correct", (verdict["evidence"], verdict["log_tail"][-2000:])
