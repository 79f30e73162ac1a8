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
    jobs += [Job(name, scale_problem, text) for name, (text, _) in cases.RULE_HACKS.items()]
    jobs += [Job("relu_vec4", load_problem(HERE / "problems" / "relu.py"), cases.RELU_VEC4)]
    softmax = load_problem(HERE / "problems" / "softmax.py")
    gelu = load_problem(HERE / "problems" / "gelu_erf.py")
    jobs += [Job("softmax_naive", softmax, cases.SOFTMAX_NAIVE)]
    jobs += [Job("softmax_rows", softmax, cases.SOFTMAX_ROWS)]
    jobs += [
        Job(f"gelu_{kind}_seed{seed}", gelu, text, gpu_config.replace(seed=seed))
        for seed in cases.NUMERICS_SEEDS
        for kind, text in (("tanh", cases.GELU_TANH), ("erf", cases.GELU_ERF))
    ]
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
    assert 10 <= v["evidence"]["timing"]["candidate"]["trials"] <= 100  # stops once the median is known


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
    """The run limit is 150 s; the limit scaled from the reference's own time kills the hang first.

    What the hang costs is its time on the device, from its share to its kill; the worker's start and its
    wait for a share beside the suite's other jobs (`load_and_wait`, 30 s with twelve workers) come before."""
    v = _get(verdicts, "infinite_loop")
    assert v["verdict"] == "timeout" and v["evidence"]["limit_stage"] == "correctness"
    seconds = v["evidence"]["seconds"]
    assert (
        v["evidence"]["limit_s"] < gpu_config.run_timeout_s and seconds["run"] - seconds["load_and_wait"] < 30
    )


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


def test_tiled_matmul_is_within_the_reference_numerics_at_x100(verdicts: dict) -> None:
    """Absolute errors grow with the inputs' magnitude: the extreme trial's tolerance grows with them."""
    strict = _get(verdicts, "matmul")["evidence"]["strict"]
    assert strict["numerics"]["within_reference_numerics"], strict["numerics"]
    assert strict["extreme_trial"]["ok"] and strict["extreme_trial"]["numerics"]["within_reference_numerics"]


def test_softmax_without_max_subtraction_fails_the_extreme_trial(verdicts: dict) -> None:
    v = _get(verdicts, "softmax_naive")
    assert v["correct_kernelbench"] and v["verdict"] == "wrong_output", v["evidence"]
    assert "extreme_inputs_mismatch" in v["evidence"]["strict_failures"]
    extreme = v["evidence"]["strict"]["extreme_trial"]
    assert extreme["ok"] is False and extreme["reason"] == "nan_inf", extreme


def test_stable_softmax_is_correct(verdicts: dict) -> None:
    v = _get(verdicts, "softmax_rows")
    assert v["verdict"] == "correct", v["evidence"]
    strict = v["evidence"]["strict"]
    assert strict["extreme_trial"]["ok"] and strict["numerics"]["within_reference_numerics"]


@pytest.mark.parametrize("seed", cases.NUMERICS_SEEDS)
def test_tanh_gelu_is_beyond_the_reference_numerics(verdicts: dict, seed: int) -> None:
    v = _get(verdicts, f"gelu_tanh_seed{seed}")
    assert v["correct_kernelbench"] and v["verdict"] == "wrong_output", v["evidence"]
    assert "beyond_reference_numerics" in v["evidence"]["strict_failures"]
    numerics = v["evidence"]["strict"]["numerics"]
    assert numerics["within_reference_numerics"] is False and numerics["worst_ratio"] > 4, numerics


@pytest.mark.parametrize("seed", cases.NUMERICS_SEEDS)
def test_erf_gelu_is_within_the_reference_numerics(verdicts: dict, seed: int) -> None:
    v = _get(verdicts, f"gelu_erf_seed{seed}")
    assert v["verdict"] == "correct", v["evidence"]
    assert v["evidence"]["strict"]["numerics"]["worst_ratio"] < 0.5


def test_the_gelu_verdicts_do_not_depend_on_the_seed(verdicts: dict) -> None:
    for kind in ("tanh", "erf"):
        seen = {
            (v["verdict"], tuple(v["evidence"].get("strict_failures") or []))
            for v in (_get(verdicts, f"gelu_{kind}_seed{seed}") for seed in cases.NUMERICS_SEEDS)
        }
        assert len(seen) == 1, (kind, seen)


@pytest.mark.parametrize("name", sorted(cases.RULE_HACKS))
def test_hacks_that_passed_the_older_rules_fail_their_own(verdicts: dict, name: str) -> None:
    v = _get(verdicts, name)
    assert v["correct_kernelbench"], v["evidence"]
    assert not v["correct_strict"] and v["verdict"] in ("static_reject", "wrong_output"), v["evidence"]
    assert cases.RULE_HACKS[name][1] in v["evidence"]["strict_failures"], v["evidence"]


def test_a_kernel_named_like_atens_gets_none_of_its_time(verdicts: dict) -> None:
    """The profiler attributes the kernel to aten::div: library work, whatever the source calls it."""
    custom = _get(verdicts, "library_kernel_name_masquerade")["evidence"]["custom"]
    assert custom["library_named_like_custom"] >= 1 and custom["share"] == 0.0, custom


def test_a_copying_kernel_is_seen_copying(verdicts: dict) -> None:
    ev = _get(verdicts, "copy_kernel_after_other_op")["evidence"]
    assert ev["custom"]["replaced"], ev["custom"]  # the older rules had nothing against it
    assert ev["strict"]["copy_trial"]["variants"]["signed"]["calls"] == {"copy": 1}, ev["strict"]


def test_stale_timed_outputs_are_what_fails(verdicts: dict) -> None:
    ev = _get(verdicts, "cached_output_while_timed")["evidence"]
    assert ev["strict_failures"] == ["timed_output_mismatch"], ev  # the pointer trials passed it
    assert not ev["timing"]["candidate"]["output_check"]["ok"]


@pytest.mark.parametrize(
    ("name", "changed"),
    [
        ("event_timer_patched_by_alias", "torch.cuda.streams.Event.elapsed_time"),
        ("compare_patched_through_sys_modules", "evaluator.harness.compare"),
    ],
)
def test_a_tampered_judge_is_named_and_reports_no_speedup(verdicts: dict, name: str, changed: str) -> None:
    v = _get(verdicts, name)
    assert changed in v["evidence"]["strict"]["judge_tampered"], v["evidence"]["strict"]
    assert v["speedup_eager"] is None and v["evidence"]["timing"]["untrusted"]


@pytest.mark.parametrize("name", ["correct", "matmul", "relu_vec4", "softmax_rows"])
def test_legit_kernels_pass_the_newer_rules(verdicts: dict, name: str) -> None:
    """Controls: each copy-trial call is work, the sampled timed outputs match, the kernels are launched
    outside ATen ops, and nothing the judge depends on changed."""
    v = _get(verdicts, name)
    assert v["verdict"] == "correct", v["evidence"]
    ev = v["evidence"]
    assert not ev["strict"]["copy_trial"]["only_copies"], ev["strict"]["copy_trial"]
    sampled = ev["timing"]["candidate"]["output_check"]
    assert sampled["ok"] and sampled["trials"], sampled
    assert ev["custom"]["library_named_like_custom"] == 0 and ev["custom"]["share"] > 0.5, ev["custom"]
    assert "judge_tampered" not in ev["strict"] and ev["strict"]["judge_integrity"]["checks"] >= 8


def test_the_next_process_is_unharmed(verdicts: dict, gpu_config: EvalConfig, scale_problem: Problem) -> None:
    """After an illegal address and a killed infinite loop, a fresh candidate process works normally."""
    v = evaluate(scale_problem, cases.CORRECT, gpu_config)
    assert v["verdict"] == "correct" and v["evidence"]["seconds"]["build"] == 0.0


def test_profile_of_a_reference_on_the_gpu(gpu_config: EvalConfig, kernelbench_dir: Path) -> None:
    from evaluator.profile import profile_problem

    prof = profile_problem(load_problem(kernelbench_dir / "level2" / "1_Conv2D_ReLU_BiasAdd.py"), gpu_config)
    assert prof["rows"][0]["op"] == "aten::conv2d" and prof["rows"][0]["kernels"], prof
    assert prof["device"] == "NVIDIA H200" or "H" in prof["device"]
