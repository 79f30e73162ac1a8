"""Strict numerics through the `cpu` backend, real workers and C++ kernels: the extreme-range trial and the
tolerance derived from the reference's float64 run (evaluator.numerics), with the seed changed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cpu_cases as cases
import pytest

from evaluator.api import evaluate_many
from evaluator.config import EvalConfig
from evaluator.jobs import Job
from evaluator.problem import load_problem

pytestmark = pytest.mark.slow
HERE = Path(__file__).resolve().parent
SEEDS = (42, 7, 1234)


@pytest.fixture(scope="module")
def verdicts(cpu_config: EvalConfig) -> dict[str, dict[str, Any]]:
    softmax = load_problem(HERE / "problems" / "softmax.py")
    gelu = load_problem(HERE / "problems" / "gelu_erf.py")
    jobs = [
        Job("softmax_naive", softmax, cases.SOFTMAX_NAIVE),
        Job("softmax_stable", softmax, cases.SOFTMAX_STABLE),
    ]
    jobs += [
        Job(f"gelu_{kind}_{seed}", gelu, text, cpu_config.replace(seed=seed))
        for seed in SEEDS
        for kind, text in (("tanh", cases.GELU_TANH), ("erf", cases.GELU_ERF))
    ]
    results = evaluate_many(jobs, cpu_config)
    return {job.job_id: v for job, v in zip(jobs, results, strict=True)}


def test_softmax_without_max_subtraction_fails_only_the_extreme_trial(verdicts: dict) -> None:
    v = verdicts["softmax_naive"]
    assert v["correct_kernelbench"] and v["verdict"] == "wrong_output", v["evidence"]
    assert v["evidence"]["strict_failures"] == ["extreme_inputs_mismatch"]
    extreme = v["evidence"]["strict"]["extreme_trial"]
    assert extreme["ok"] is False and extreme["reason"] == "nan_inf" and extreme["input_scale"] == 100.0
    assert v["evidence"]["strict"]["signed_trial"]["ok"]


def test_stable_softmax_is_correct_on_the_extreme_trial(verdicts: dict) -> None:
    v = verdicts["softmax_stable"]
    assert v["verdict"] == "correct", v["evidence"]
    strict = v["evidence"]["strict"]
    assert strict["extreme_trial"]["ok"] and strict["extreme_trial"]["numerics"]["within_reference_numerics"]
    assert strict["numerics"]["within_reference_numerics"] and strict["numerics"]["derived_on_trials"] == 2


@pytest.mark.parametrize("seed", SEEDS)
def test_tanh_gelu_is_beyond_the_reference_numerics(verdicts: dict, seed: int) -> None:
    v = verdicts[f"gelu_tanh_{seed}"]
    assert v["correct_kernelbench"] and v["verdict"] == "wrong_output", v["evidence"]
    numerics = v["evidence"]["strict"]["numerics"]
    assert "beyond_reference_numerics" in v["evidence"]["strict_failures"]
    assert numerics["within_reference_numerics"] is False and numerics["worst_ratio"] > 4, numerics
    assert numerics["candidate_error"] > numerics["tolerance"] > numerics["reference_error"] > 0


@pytest.mark.parametrize("seed", SEEDS)
def test_erf_gelu_is_within_the_reference_numerics(verdicts: dict, seed: int) -> None:
    v = verdicts[f"gelu_erf_{seed}"]
    assert v["verdict"] == "correct", v["evidence"]
    assert v["evidence"]["strict"]["numerics"]["worst_ratio"] < 0.5
    assert v["evidence"]["strict"]["signed_trial"]["numerics"]["within_reference_numerics"]


def test_the_gelu_verdicts_do_not_depend_on_the_seed(verdicts: dict) -> None:
    for kind in ("tanh", "erf"):
        seen = {
            (
                verdicts[f"gelu_{kind}_{seed}"]["verdict"],
                tuple(verdicts[f"gelu_{kind}_{seed}"]["evidence"]["strict_failures"]),
            )
            for seed in SEEDS
        }
        assert len(seen) == 1, (kind, seen)
