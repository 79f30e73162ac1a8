import json
from pathlib import Path

import cpu_cases as cases
import pytest

from evaluator.extract import extract_candidate
from evaluator.static_checks import check_candidate, hacks, rejected

RELU_REF = "import torch\nclass Model:\n    def forward(self, x):\n        return torch.relu(x)\n"


def codes(text: str) -> dict[str, str]:
    return {f["code"]: f["severity"] for f in check_candidate(extract_candidate(text), RELU_REF)}


def test_a_real_kernel_has_no_findings() -> None:
    assert codes(cases.CORRECT) == {}
    assert codes(cases.WRONG) == {}  # wrong numbers are for the run to find, not the AST


@pytest.mark.parametrize(
    ("case", "code"),
    [
        ("SUBPROCESS", "forbidden_import"),
        ("NETWORK", "forbidden_import"),
        ("FILE_WRITE", "forbidden_call"),
        ("OS_SYSTEM", "forbidden_call"),
        ("INTROSPECTION", "introspection"),
    ],
)
def test_sandbox_escapes_are_refused(case: str, code: str) -> None:
    found = codes(getattr(cases, case))
    assert found.get(code) == "reject"


@pytest.mark.parametrize(
    ("case", "code"),
    [
        ("INHERITS", "inherits_model"),
        ("FALLBACK", "try_except_fallback"),
        ("TORCH_OPS", "kernel_not_called"),
        ("SIDE_STREAM", "side_stream"),
        ("THREADS", "threads"),
        ("SEED_TAMPER", "global_state"),
    ],
)
def test_reward_hacks_are_flagged(case: str, code: str) -> None:
    found = codes(getattr(cases, case))
    assert found.get(code) == "hack"
    assert "reject" not in found.values()  # hacks still run, so the KernelBench verdict can be reported


def test_reference_op_reuse_is_named() -> None:
    findings = check_candidate(extract_candidate(cases.TORCH_OPS), RELU_REF)
    note = next(f for f in findings if f["code"] == "reference_ops")
    assert "torch.relu" in note["message"]


@pytest.mark.parametrize(
    ("source", "code"),
    [
        ("import torch\ntorch.matmul = lambda a, b: a\nclass ModelNew:\n    pass\n", "tampering"),
        (
            "import torch\nclass ModelNew:\n    def forward(self, x):\n        torch.save(x, 'x.pt')\n",
            "file_access",
        ),
        ("import gc\nclass ModelNew:\n    pass\n", "forbidden_import"),
        ("class ModelNew:\n    def forward(self, x):\n        return eval('x')\n", "forbidden_call"),
        ("from os import system\nclass ModelNew:\n    pass\n", "forbidden_import"),
        ("from evaluator import harness\nclass ModelNew:\n    pass\n", "judge_import"),
        ("import evaluator.harness as h\nclass ModelNew:\n    pass\n", "judge_import"),
        ("from evaluator.regions.launch import nvrtc\nclass ModelNew:\n    pass\n", "judge_import"),
        ("import evaluator.regions.launch\nclass ModelNew:\n    pass\n", "judge_import"),
        ("class ModelNew(:\n", "syntax_error"),
        ("class Other:\n    pass\n", "no_model_new"),
    ],
)
def test_more_refusals(source: str, code: str) -> None:
    findings = check_candidate(source)
    assert code in {f["code"] for f in findings if f["severity"] == "reject"}
    assert rejected(findings)


def test_a_region_program_may_import_the_region_launcher_and_nothing_else_of_the_evaluator() -> None:
    source = "from evaluator.regions.launch import load_region_kernel\nclass ModelNew:\n    pass\n"
    assert "judge_import" not in {f["code"] for f in check_candidate(source)}


def test_kernel_reached_through_helpers_and_attributes_counts_as_called() -> None:
    source = """
from torch.utils.cpp_extension import load_inline
import torch.nn as nn
mod = load_inline(name="m", cpp_sources="", functions=["f"])
class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.op = mod.f
    def forward(self, x):
        return self._run(x)
    def _run(self, x):
        return self.op(x)
"""
    assert hacks(check_candidate(source)) == []


def test_real_completions_that_never_call_their_kernel(samples_dir: Path) -> None:
    """DESIGN.md: the five level-3 'correct' samples compile a kernel and never call it."""
    flagged = set()
    for f in samples_dir.glob("level3_problem*.json"):
        source = extract_candidate(json.loads(f.read_text())["completion"])
        if source and "kernel_not_called" in {x["code"] for x in check_candidate(source)}:
            flagged.add(f.stem)
    assert {
        "level3_problem2",
        "level3_problem3",
        "level3_problem5",
        "level3_problem6",
        "level3_problem9",
    } <= flagged
