"""The rules against reward hacks that got a strict "correct" before, through the `cpu` backend: real
builds (cpu_cases' shared extension), real worker processes. Rule 2 (kernels under ATen ops are library
work) needs the CUDA profiler: test_hack_rules.py and the GPU suite have it."""

from __future__ import annotations

from typing import Any

import cpu_cases
import cpu_hack_cases as hacks
import pytest

from evaluator.api import evaluate_many
from evaluator.config import EvalConfig
from evaluator.jobs import Job
from evaluator.problem import Problem

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def verdicts(cpu_config: EvalConfig, relu_problem: Problem) -> dict[str, dict[str, Any]]:
    # The timer's warm-up calls a forward this many times in a row on the same inputs (the GPU default: 5).
    warm = cpu_config.replace(warmup=4)
    jobs = [
        Job("CORRECT", relu_problem, cpu_cases.CORRECT, warm),
        Job("RELU_TWICE", relu_problem, hacks.RELU_TWICE),
        Job("COPY_AFTER_OTHER_OP", relu_problem, hacks.COPY_AFTER_OTHER_OP),
        Job("TIMED_CACHE", relu_problem, hacks.TIMED_CACHE, warm),
        Job("PATCH_CLOCK_ALIAS", relu_problem, hacks.PATCH_CLOCK_ALIAS),
        Job("PATCH_COMPARE", relu_problem, hacks.PATCH_COMPARE),
        Job("IMPORT_JUDGE", relu_problem, hacks.IMPORT_JUDGE),
    ]
    results = evaluate_many(jobs, cpu_config)
    return {job.job_id: v for job, v in zip(jobs, results, strict=True)}


def test_legit_kernels_pass_every_new_rule(verdicts: dict) -> None:
    for name, calls in (("CORRECT", {"work": 1}), ("RELU_TWICE", {"work": 1, "copy": 1})):
        v = verdicts[name]
        assert v["verdict"] == "correct", (name, v["evidence"])
        strict, timing = v["evidence"]["strict"], v["evidence"]["timing"]
        assert not strict["copy_trial"]["only_copies"], strict["copy_trial"]
        assert strict["copy_trial"]["variants"]["signed"] == {"verdict": "work", "calls": calls}
        assert timing["candidate"]["output_check"]["ok"] and timing["candidate"]["output_check"]["trials"]
        assert strict["judge_integrity"]["checks"] >= 8 and "judge_tampered" not in strict
        assert v["speedup_eager"] > 0


def test_a_copying_kernel_after_another_op_is_not_work(verdicts: dict) -> None:
    v = verdicts["COPY_AFTER_OTHER_OP"]
    assert v["correct_kernelbench"] and v["verdict"] == "static_reject", v["evidence"]
    assert v["evidence"]["strict_failures"] == ["custom_kernels_only_copy"]  # every older rule passed it
    assert v["evidence"]["custom"]["replaced"] and v["evidence"]["strict"]["skip_trial"]["output_changed"]
    assert v["evidence"]["strict"]["copy_trial"]["variants"]["signed"]["calls"] == {"copy": 1}


def test_stale_outputs_while_timed_are_caught(verdicts: dict) -> None:
    v = verdicts["TIMED_CACHE"]
    assert v["correct_kernelbench"] and v["verdict"] == "wrong_output", v["evidence"]
    assert v["evidence"]["strict_failures"] == ["timed_output_mismatch"]  # the pointer trials passed it
    check = v["evidence"]["timing"]["candidate"]["output_check"]
    assert not check["ok"] and check["mismatch"]["reason"] == "values"


@pytest.mark.parametrize(
    ("case", "changed"),
    [("PATCH_CLOCK_ALIAS", "time.perf_counter"), ("PATCH_COMPARE", "evaluator.harness.compare")],
)
def test_tampering_with_the_judge_is_named_and_not_timed(verdicts: dict, case: str, changed: str) -> None:
    v = verdicts[case]
    assert v["correct_kernelbench"] and not v["correct_strict"], v["evidence"]
    assert v["verdict"] in ("static_reject", "wrong_output")
    assert "judge_tampered" in v["evidence"]["strict_failures"]
    assert changed in v["evidence"]["strict"]["judge_tampered"]
    assert v["speedup_eager"] is None and v["evidence"]["timing"]["untrusted"]


def test_a_patch_made_while_loading_is_undone_before_judging(verdicts: dict) -> None:
    """The clock patched at import is put back at the first check: only judge_tampered fails it."""
    assert verdicts["PATCH_CLOCK_ALIAS"]["evidence"]["strict_failures"] == ["judge_tampered"]


def test_loading_the_judges_code_is_refused(verdicts: dict) -> None:
    v = verdicts["IMPORT_JUDGE"]
    assert v["verdict"] == "runtime_error" and v["evidence"]["error"]["type"] == "PermissionError"
    assert any("static_checks.py" in r for r in v["evidence"]["sandbox_refusals"])
