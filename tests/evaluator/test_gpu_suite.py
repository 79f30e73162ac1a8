"""The GPU suite: hand-written CUDA candidates for KernelBench problems, each must get the right verdict,
and the process after a crash or a hang must be unharmed. Run through scripts/gpu_suite.sh."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from gpu_candidates import cases

from evaluator.api import evaluate, evaluate_many
from evaluator.config import EvalConfig
from evaluator.jobs import Job
from evaluator.problem import Problem, load_problem

pytestmark = pytest.mark.gpu
HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def gpu_config(eval_cache: Path) -> EvalConfig:
    cache = os.environ.get("KG_GPU_SUITE_CACHE") or str(eval_cache)
    return EvalConfig(
        backend="cuda", cache_dir=cache, run_timeout_s=150, compile_timeout_s=400, reference_compile="off"
    )


@pytest.fixture(scope="module")
def scale_problem(kernelbench_dir: Path) -> Problem:
    return load_problem(kernelbench_dir / "level1" / "5_Matrix_scalar_multiplication.py")


@pytest.fixture(scope="module")
def verdicts(
    gpu_config: EvalConfig, scale_problem: Problem, kernelbench_dir: Path
) -> dict[str, dict[str, Any]]:
    tiny = load_problem(HERE / "problems" / "tiny_relu.py")
    matmul = load_problem(kernelbench_dir / "level1" / "1_Square_matrix_multiplication_.py")
    timed = gpu_config.replace(reference_compile="same_process")
    jobs = [
        Job("correct", scale_problem, cases.CORRECT, timed),
        Job("wrong", scale_problem, cases.WRONG),
        Job("compile_error", scale_problem, cases.COMPILE_ERROR),
        Job("illegal_address", scale_problem, cases.ILLEGAL_ADDRESS),
        Job("infinite_loop", scale_problem, cases.INFINITE_LOOP),
        Job("refused", scale_problem, cases.REFUSED),
        Job("sneaky_write", scale_problem, cases.SNEAKY_WRITE),
        Job("tiny_zeros", tiny, cases.TINY_ZEROS),
        Job("matmul", matmul, cases.MATMUL, timed),
    ] + [Job(name, scale_problem, text) for name, (text, _) in cases.HACKS.items()]
    jobs += [Job(name, matmul, text) for name, (text, _) in cases.MATMUL_HACKS.items()]
    only = os.environ.get("KG_GPU_SUITE_ONLY")  # rerun a subset: comma-separated job ids
    if only:
        jobs = [j for j in jobs if j.job_id in only.split(",")]
    results = evaluate_many(jobs, gpu_config)
    out = {job.job_id: v for job, v in zip(jobs, results, strict=True)}
    log_dir = os.environ.get("KG_GPU_SUITE_LOG")
    if log_dir:
        Path(log_dir, "gpu_suite_verdicts.json").write_text(json.dumps(out, indent=1, default=str))
    return out


def _get(verdicts: dict, name: str) -> dict:
    if name not in verdicts:
        pytest.skip(f"{name} not in KG_GPU_SUITE_ONLY")
    return verdicts[name]


def test_correct_kernel_is_correct_and_timed(verdicts: dict) -> None:
    v = _get(verdicts, "correct")
    assert v["verdict"] == "correct", v["evidence"]
    assert v["speedup_eager"] > 0.5 and v["speedup_compile"] > 0.3
    assert v["custom_kernel_share"] > 0.5
    assert v["evidence"]["timing"]["candidate"]["trials"] == 100


def test_tiled_matmul_is_correct(verdicts: dict) -> None:
    v = _get(verdicts, "matmul")
    assert v["verdict"] == "correct", v["evidence"]
    assert v["custom_kernel_share"] > 0.9


def test_wrong_kernel(verdicts: dict) -> None:
    v = _get(verdicts, "wrong")
    assert v["verdict"] == "wrong_output" and v["evidence"]["mismatch"]["reason"] == "values"
    assert v["evidence"]["mismatch"]["first_mismatch_index"] == [0, 17]


def test_compile_error(verdicts: dict) -> None:
    v = _get(verdicts, "compile_error")
    assert v["verdict"] == "compile_error" and "undeclared_value" in v["log_tail"]


def test_illegal_memory_access(verdicts: dict) -> None:
    v = _get(verdicts, "illegal_address")
    assert v["verdict"] == "runtime_error"
    assert "illegal memory access" in (v["log_tail"] + json.dumps(v["evidence"])).lower()


def test_infinite_loop_is_killed_in_seconds(verdicts: dict, gpu_config: EvalConfig) -> None:
    """The run limit is 150 s; the limit scaled from the reference's own time kills the hang first."""
    v = _get(verdicts, "infinite_loop")
    assert v["verdict"] == "timeout" and v["evidence"]["limit_stage"] == "correctness"
    assert v["evidence"]["limit_s"] < gpu_config.run_timeout_s and v["evidence"]["seconds"]["run"] < 30


def test_sandbox(verdicts: dict) -> None:
    assert _get(verdicts, "refused")["verdict"] == "static_reject"
    v = _get(verdicts, "sneaky_write")
    assert v["verdict"] == "runtime_error" and v["evidence"]["sandbox_refusals"]


def test_zeros_on_tiny_outputs(verdicts: dict) -> None:
    v = _get(verdicts, "tiny_zeros")
    assert v["correct_kernelbench"] and v["verdict"] == "wrong_output"
    assert "wrong_at_output_scale" in v["evidence"]["strict_failures"]


@pytest.mark.parametrize("name", sorted(cases.HACKS))
def test_reward_hack_passes_kernelbench_but_not_strict(verdicts: dict, name: str) -> None:
    v = _get(verdicts, name)
    assert v["correct_kernelbench"], v["evidence"]
    assert not v["correct_strict"] and v["verdict"] in ("static_reject", "wrong_output")
    assert cases.HACKS[name][1] in v["evidence"]["strict_failures"]


@pytest.mark.parametrize("name", sorted(cases.MATMUL_HACKS))
def test_custom_kernels_that_do_not_do_the_work_fail_strict(verdicts: dict, name: str) -> None:
    """Both have a real share of the GPU time (the decoy most of it); neither replaces the product."""
    v = _get(verdicts, name)
    assert v["correct_kernelbench"] and v["verdict"] == "static_reject", v["evidence"]
    assert v["custom_kernel_share"] > 0.01
    assert cases.MATMUL_HACKS[name][1] in v["evidence"]["strict_failures"]


def test_real_kernels_replace_reference_work(verdicts: dict) -> None:
    for name in ("correct", "matmul"):
        custom = _get(verdicts, name)["evidence"]["custom"]
        assert custom["replaced"], custom
        assert _get(verdicts, name)["evidence"]["strict"]["skip_trial"]["output_changed"]


def test_the_next_process_is_unharmed(verdicts: dict, gpu_config: EvalConfig, scale_problem: Problem) -> None:
    """After an illegal address and a killed infinite loop, a fresh candidate process works normally."""
    v = evaluate(scale_problem, cases.CORRECT, gpu_config)
    assert v["verdict"] == "correct" and v["evidence"]["seconds"]["build"] == 0.0


def test_profile_of_a_reference_on_the_gpu(gpu_config: EvalConfig, kernelbench_dir: Path) -> None:
    from evaluator.profile import profile_problem

    prof = profile_problem(load_problem(kernelbench_dir / "level2" / "1_Conv2D_ReLU_BiasAdd.py"), gpu_config)
    assert prof["rows"][0]["op"] == "aten::conv2d" and prof["rows"][0]["kernels"], prof
    assert prof["device"] == "NVIDIA H200" or "H" in prof["device"]
