"""Grown twins of the family tasks: which sizes grow, by how much, and the report over verdict files."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import family_scale
from evaluator.problem import problem_from_source

ROWS = """import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(128)

    def forward(self, x):
        return self.norm(x)


rows = 32
cols = 128


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
"""

SCORES = """import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, q, k):
        return torch.softmax(q @ k.transpose(-2, -1), dim=-1)


batch = 2
tokens = 16
width = 8


def get_inputs():
    return [torch.randn(batch, tokens, width), torch.randn(batch, tokens, width)]


def get_init_inputs():
    return []
"""


def test_a_layer_built_for_one_width_grows_its_other_sizes() -> None:
    """Growing rows and cols together breaks `nn.LayerNorm(128)` at every factor; rows alone grow."""
    twin, factor = family_scale.grow(problem_from_source(ROWS, "rows"), elements=1 << 16)
    assert factor == 16  # 512 rows of 128: 2^16 values
    assert "rows = 512" in twin.source and "cols = 128" in twin.source
    assert family_scale.largest(twin) == 1 << 16


def test_intermediates_bound_the_factor() -> None:
    """The scores (batch x tokens x tokens, 512 f^3) outgrow the inputs (256 f^3): they set the factor."""
    twin, factor = family_scale.grow(problem_from_source(SCORES, "scores"), elements=1 << 14)
    assert factor == 2
    assert family_scale.largest(twin) == 512 * 2**3


def test_a_problem_without_sizes_stays() -> None:
    source = ROWS.replace("rows = 32", "a = 32").replace("cols = 128", "b = 128")
    source = source.replace("rows, cols", "a, b")
    problem = problem_from_source(source, "fixed")
    assert family_scale.grow(problem) == (problem, 1)


def test_report_counts_strict_and_names_the_rest(tmp_path: Path) -> None:
    def verdict(task: str, strict: bool, speed: float | None) -> str:
        return json.dumps(
            {
                "job_id": f"zero_shot:L1/{task}|{task}/r0s0",
                "verdict": "correct" if strict else "wrong_output",
                "correct_strict": strict,
                "speedup_eager": speed,
                "evidence": {},
            }
        )

    lines = [verdict("A", True, 2.0), verdict("B", True, 0.5), verdict("C", False, None)]
    (tmp_path / "grown_moderate.verdicts.jsonl").write_text("\n".join(lines) + "\n")
    text = family_scale.report(tmp_path)
    assert "| grown_moderate | - | L1 | 3 | 2 | 1 | 1.00x |" in text
    assert "- grown_moderate: L1/C (wrong_output)" in text
    assert (tmp_path / "summary.md").read_text() == text


def test_reference_error_where_float32_itself_misses_the_fixed_check(tmp_path: Path) -> None:
    """(x + 1e4) - 1e4 in float32 rounds x to 1e4's ulp (~1e-3): the float32 reference fails
    atol = rtol = 1e-4 against float64; x * 2 is exact and passes."""
    (tmp_path / "level1").mkdir()
    lossy = tmp_path / "level1" / "1_Cancel.py"
    lossy.write_text(ROWS.replace("self.norm(x)", "(x + 1e4) - 1e4"))
    exact = tmp_path / "level1" / "2_Double.py"
    exact.write_text(ROWS.replace("self.norm(x)", "x * 2"))
    found = family_scale.reference_error(lossy, device="cpu")
    assert found["task"] == "L1/Cancel"
    assert not found["passes_fixed_check"] and found["elements_beyond"] > 0
    assert found["max_abs_err"] > family_scale.ATOL
    assert family_scale.reference_error(exact, device="cpu")["passes_fixed_check"]
