"""Helpers of the launch-shape and fusion tests: a problem of one line of PyTorch, its regions at an
ambition, and a program of the rules' bodies on their ruled launches judged strictly on the GPU."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evaluator.problem import Problem, problem_from_dict
from regions.contract import Contract
from regions.export import Written, export_program, region_markers
from regions.model import Region
from regions.offering import choose, contracted, cut
from regions.rules import rule_body
from regions.shapes import ruled_launch
from regions.trace import Traced, trace_problem, trace_source


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


def ruled_program(problem: Problem, ruled: bool = True) -> tuple[list[str], list[Written]]:
    """Each region's rule body on its ruled launch (its first contract where none fits, or where `ruled`
    is off): the launches' names and what export writes."""
    names, written = [], []
    for region, first in parts(problem):
        body = rule_body(region, first)
        assert body is not None
        launch = ruled_launch(region, body) if ruled else None
        names.append(launch[0] if launch else "first")
        written.append(Written(region, launch[1] if launch else first, body))
    return names, written


def by_rule(source: str, ruled: bool = True) -> tuple[Traced, list[Written]]:
    """A problem's trace (the one export and fusion read) and its moderate regions' rule bodies, on their
    ruled launches or (`ruled` off) their first contracts."""
    problem = problem_from_dict({"name": "by_rule", "level": 0, "problem_id": 0, "source": source})
    return trace_source(source), ruled_program(problem, ruled)[1]


def strictly_correct_on_gpu(problem: Problem, written: list[Written], cache: Path, trials: int = 5) -> None:
    source = export_program(problem, written, "nvrtc")
    program_strictly_correct(problem, source, region_markers(written), cache, trials)


def program_strictly_correct(
    problem: Problem, source: str, markers: list[dict[str, Any]], cache: Path, trials: int = 5
) -> None:
    """The region program judged on the GPU: strictly correct, and every kernel's own check."""
    from evaluator.api import evaluate_many
    from evaluator.config import EvalConfig
    from evaluator.jobs import Job

    job = Job("shapes", problem, source, code=source, extracted=True, regions=markers)
    config = EvalConfig(backend="cuda", cache_dir=str(cache), reference_compile="off", timing_trials=trials)
    (verdict,) = evaluate_many([job], config)
    assert verdict["verdict"] == "correct", (verdict["evidence"], verdict["log_tail"][-2000:])
    assert {r["verdict"] for r in verdict["evidence"]["regions"]} == {"correct"}
