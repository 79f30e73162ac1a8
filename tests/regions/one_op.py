"""Helpers of the launch-shape tests: a problem of one line of PyTorch, its regions at an ambition, and a
program of the rules' bodies on their ruled launches judged strictly on the GPU."""

from __future__ import annotations

from pathlib import Path

from evaluator.problem import Problem, problem_from_dict
from regions.contract import Contract
from regions.export import Written, export_program, region_markers
from regions.model import Region
from regions.offering import choose, contracted, cut
from regions.rules import rule_body
from regions.shapes import ruled_launch
from regions.trace import trace_problem


def one_line(expr: str, inputs: str) -> Problem:
    """A problem whose forward returns `expr` of x, with `inputs` its get_inputs list."""
    source = (
        "import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    def forward(self, x):\n"
        f"        return {expr}\n\n\ndef get_inputs():\n    return [{inputs}]\n\n\n"
        "def get_init_inputs():\n    return []\n"
    )
    return problem_from_dict({"name": "one_line", "level": 0, "problem_id": 0, "source": source})


def parts(problem: Problem, ambition: str = "moderate") -> list[tuple[Region, Contract]]:
    fit, _ = contracted(cut(trace_problem(problem), ambition))
    return choose(fit, ambition)


def ruled_program(problem: Problem) -> tuple[list[str], list[Written]]:
    """Each region's rule body on its ruled launch (its first contract where none fits): the launches'
    names and what export writes."""
    names, written = [], []
    for region, first in parts(problem):
        body = rule_body(region, first)
        assert body is not None
        launch = ruled_launch(region, body)
        names.append(launch[0] if launch else "first")
        written.append(Written(region, launch[1] if launch else first, body))
    return names, written


def strictly_correct_on_gpu(problem: Problem, written: list[Written], cache: Path, trials: int = 5) -> None:
    from evaluator.api import evaluate_many
    from evaluator.config import EvalConfig
    from evaluator.jobs import Job

    source = export_program(problem, written, "nvrtc")
    job = Job("shapes", problem, source, code=source, extracted=True, regions=region_markers(written))
    config = EvalConfig(backend="cuda", cache_dir=str(cache), reference_compile="off", timing_trials=trials)
    (verdict,) = evaluate_many([job], config)
    assert verdict["verdict"] == "correct", (verdict["evidence"], verdict["log_tail"][-2000:])
    assert {r["verdict"] for r in verdict["evidence"]["regions"]} == {"correct"}
