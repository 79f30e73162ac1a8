"""Every verdict from a real candidate through the `cpu` backend: real builds, processes and timeouts.

One batch (`evaluate_many`) runs all cases; they share one C++ extension source, so the build cache
compiles it once (plus one deliberately broken build).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cpu_cases as cases
import pytest

from evaluator.api import evaluate, evaluate_many
from evaluator.config import EvalConfig
from evaluator.jobs import Job
from evaluator.problem import Problem, load_problem, shrink_problem

pytestmark = pytest.mark.slow

RELU_CASES = [
    "CORRECT",
    "WRONG",
    "HANG",
    "SEGFAULT",
    "PY_ERROR",
    "BAD_INIT",
    "IDENTITY",
    "MUTATES",
    "POINTER_CACHE",
    "TORCH_OPS",
    "INHERITS",
    "FALLBACK",
    "SIDE_STREAM",
    "THREADS",
    "SUBPROCESS",
    "SEED_TAMPER",
    "SNEAKY_WRITE",
    "NO_CODE",
    "COMPILE_ERROR",
    "TWO_EXTENSIONS",
    "LIBRARY_IN_WRAPPER",
    "DECOY",
]


@pytest.fixture(scope="module")
def verdicts(
    cpu_config: EvalConfig, relu_problem: Problem, tiny_problem: Problem
) -> dict[str, dict[str, Any]]:
    jobs = [Job(name, relu_problem, getattr(cases, name)) for name in RELU_CASES]
    jobs.append(Job("TINY_ZEROS", tiny_problem, cases.ZEROS))
    results = evaluate_many(jobs, cpu_config)
    return {job.job_id: v for job, v in zip(jobs, results, strict=True)}


def test_correct_kernel(verdicts: dict) -> None:
    v = verdicts["CORRECT"]
    assert (v["verdict"], v["correct_strict"], v["correct_kernelbench"], v["compiled"]) == (
        "correct",
        True,
        True,
        True,
    )
    assert v["speedup_eager"] > 0 and v["custom_kernel_share"] > 0
    ev = v["evidence"]
    assert len(ev["trials"]) == 5 and all(t["ok"] for t in ev["trials"])
    assert ev["strict"]["signed_trial"]["ok"] and ev["strict"]["pointer_reuse"]["ok"]
    assert ev["timing"]["candidate"]["trials"] == 5


def test_the_worker_says_where_its_time_went(verdicts: dict) -> None:
    """Every stage of a full run, timed; together they are about the run's wall time (the rest is the
    process start and torch's import, before the first stage)."""
    ev = verdicts["CORRECT"]["evidence"]
    spent = ev["stage_seconds"]
    stages = ("load", "construct", "reference", "correctness", "strict", "custom", "timing", "skip_trial")
    for stage in stages:
        assert stage in spent and spent[stage] >= 0, spent
    assert 0 < sum(spent.values()) <= ev["seconds"]["run"]
    assert set(verdicts["WRONG"]["evidence"]["stage_seconds"]) < set(spent)  # it stopped at correctness


def test_wrong_answer_carries_the_evidence(verdicts: dict) -> None:
    v = verdicts["WRONG"]
    assert v["verdict"] == "wrong_output" and not v["correct_kernelbench"]
    mismatch = v["evidence"]["mismatch"]
    assert mismatch["reason"] == "values" and mismatch["max_abs_err"] > 0.1
    assert len(mismatch["first_mismatch_index"]) == 2 and mismatch["first_mismatch"]["got"] == 0.0


def test_hang_is_killed_at_a_limit_scaled_from_the_reference(verdicts: dict, cpu_config: EvalConfig) -> None:
    """The run limit is 30 s; the stage limit (a 10 s floor + 100 x the reference's time) kills first.

    The reference's time depends on the machine (a loaded 2-core CI host measured ~0.1 s a call), so the
    limit is checked against the run limit it must undercut, not against a fixed number; so is the time
    the worker held the device (its start and the wait for the device before that are not the run's)."""
    v = verdicts["HANG"]
    assert v["verdict"] == "timeout" and v["evidence"]["limit_stage"] == "correctness"
    assert cpu_config.hang_floor_s <= v["evidence"]["limit_s"] < cpu_config.run_timeout_s
    seconds = v["evidence"]["seconds"]
    assert seconds["run"] - seconds["load_and_wait"] < cpu_config.run_timeout_s


def test_segfault_is_a_runtime_error(verdicts: dict) -> None:
    v = verdicts["SEGFAULT"]
    assert v["verdict"] == "runtime_error" and v["evidence"]["exit"] == "SIGSEGV"


def test_python_error_is_a_runtime_error_with_traceback(verdicts: dict) -> None:
    v = verdicts["PY_ERROR"]
    assert v["verdict"] == "runtime_error" and "incompatible function arguments" in v["log_tail"]


def test_constructor_error_reports_the_real_error(verdicts: dict) -> None:
    v = verdicts["BAD_INIT"]
    assert v["verdict"] == "runtime_error" and v["evidence"]["error"]["type"] == "NameError"
    assert "undefined_scale_name" in v["log_tail"] and "refused" not in v["log_tail"]


def test_compile_error_shows_the_compiler(verdicts: dict) -> None:
    v = verdicts["COMPILE_ERROR"]
    assert v["verdict"] == "compile_error" and not v["compiled"]
    assert "undefined_symbol_here" in v["log_tail"]


def test_no_code(verdicts: dict) -> None:
    assert verdicts["NO_CODE"]["verdict"] == "no_code"


@pytest.mark.parametrize(
    ("case", "failure"),
    [
        ("IDENTITY", "signed_inputs_mismatch"),
        ("MUTATES", "input_mutation"),
        ("POINTER_CACHE", "stale_output_on_reused_buffers"),
        ("TINY_ZEROS", "wrong_at_output_scale"),
    ],
)
def test_kernelbench_passes_what_strict_catches(verdicts: dict, case: str, failure: str) -> None:
    v = verdicts[case]
    assert v["correct_kernelbench"] and v["verdict_kernelbench"] == "correct"
    assert v["verdict"] == "wrong_output" and not v["correct_strict"]
    assert failure in v["evidence"]["strict_failures"]


@pytest.mark.parametrize(
    ("case", "failure"),
    [
        ("TORCH_OPS", "no_custom_kernel_launched"),
        ("INHERITS", "inherits_model"),
        ("FALLBACK", "try_except_fallback"),
        ("SIDE_STREAM", "side_stream"),
        ("THREADS", "threads"),
        ("SEED_TAMPER", "global_state"),
        ("LIBRARY_IN_WRAPPER", "reference_work_still_runs"),
        ("DECOY", "reference_work_still_runs"),
        ("DECOY", "output_ignores_custom_kernels"),
    ],
)
def test_hacks_run_but_fail_strict(verdicts: dict, case: str, failure: str) -> None:
    v = verdicts[case]
    assert v["correct_kernelbench"] and v["verdict"] == "static_reject" and not v["correct_strict"]
    assert failure in v["evidence"]["strict_failures"]


def test_custom_work_is_told_from_custom_code_beside_the_library(verdicts: dict) -> None:
    """The wrapper's loop is needed by the output (skipping it poisons the result) but the reference's own
    op still runs; the decoy is neither. A real kernel replaces the op and is needed."""
    wrapper, decoy, real = (verdicts[c]["evidence"] for c in ("LIBRARY_IN_WRAPPER", "DECOY", "CORRECT"))
    assert wrapper["custom"]["share"] > 0.01 and decoy["custom"]["share"] > 0.01
    assert (
        wrapper["strict"]["skip_trial"]["output_changed"]
        and "output_ignores_custom_kernels" not in (wrapper["strict_failures"])
    )
    assert not decoy["strict"]["skip_trial"]["output_changed"]
    assert wrapper["custom"]["replaced"] == [] == decoy["custom"]["replaced"]
    assert real["custom"]["replaced"] and real["strict"]["skip_trial"]["output_changed"]
    assert real["strict"]["skip_trial"]["skipped_calls"] == 1


def test_refused_candidates_never_run(verdicts: dict) -> None:
    v = verdicts["SUBPROCESS"]
    assert v["verdict"] == "static_reject" and v["evidence"]["seconds"].get("build") is None


def test_runtime_sandbox_refuses_a_write_the_ast_missed(verdicts: dict) -> None:
    v = verdicts["SNEAKY_WRITE"]
    assert v["verdict"] == "runtime_error"
    assert any("kg_sneaky.bin" in r for r in v["evidence"]["sandbox_refusals"])
    assert not Path("/tmp/kg_sneaky.bin").exists()


def test_unchanged_candidate_is_not_built_again(
    verdicts: dict, cpu_config: EvalConfig, relu_problem: Problem
) -> None:
    again = evaluate(relu_problem, cases.CORRECT, cpu_config)
    assert again["verdict"] == "correct" and again["evidence"]["seconds"]["build"] == 0.0
    assert all(b["cached"] for b in again["evidence"]["builds"])


def test_shrunk_kernelbench_problem_with_a_cpp_matmul(
    verdicts: dict, cpu_config: EvalConfig, kernelbench_dir: Path
) -> None:
    problem = shrink_problem(
        load_problem(kernelbench_dir / "level1" / "1_Square_matrix_multiplication_.py"), cap=48
    )
    v = evaluate(problem, cases.MATMUL, cpu_config)
    assert v["verdict"] == "correct", v["evidence"]
    assert v["evidence"]["seconds"]["build"] == 0.0 or all(b["cached"] for b in v["evidence"]["builds"])


def test_every_constant_extension_is_built_before_the_run(verdicts: dict) -> None:
    v = verdicts["TWO_EXTENSIONS"]
    assert v["verdict"] == "correct", v["evidence"]
    built = {b["name"]: b for b in v["evidence"]["build_phase"]}
    assert set(built) == {"kg_two_a", "kg_two_b"} and all(b["ok"] and not b["cached"] for b in built.values())
    assert all(b["cached"] for b in v["evidence"]["builds"])  # the run phase found both built


def test_interleaved_times_the_compiled_reference_in_the_candidate_s_own_trials(
    cpu_config: EvalConfig, relu_problem: Problem
) -> None:
    """reference_compile=interleaved: each candidate's process compiles the reference (a real inductor
    compile here) and times it in the same trials as eager and the candidate, whose timed outputs are
    still sampled against eager's; nothing is reused from an earlier run."""
    jobs = [Job(name, relu_problem, cases.CORRECT) for name in ("a", "b")]
    config = cpu_config.replace(workers_per_device=1, reference_compile="interleaved")
    verdicts = evaluate_many(jobs, config)
    assert [v["verdict"] for v in verdicts] == ["correct", "correct"]
    for v in verdicts:
        timing = v["evidence"]["timing"]
        compiled, eager = timing["reference_compile"], timing["reference_eager"]
        assert compiled["source"] == "interleaved" and compiled["ms"] > 0 and compiled["compile_seconds"] > 0
        assert compiled["trials"] == eager["trials"] == timing["candidate"]["trials"]  # the same trials
        assert timing["candidate"]["output_check"]["ok"] and timing["candidate"]["output_check"]["trials"]
        assert v["speedup_compile"] == compiled["ms"] / timing["candidate"]["ms"]


def test_a_problem_s_later_candidates_reuse_what_its_first_derived_and_measured(
    cpu_config: EvalConfig, relu_problem: Problem
) -> None:
    """One run at a time: the problem's second run starts after its first has finished (either job may
    be first: their builds finish in any order), and takes the first's tolerances and its torch.compile time
    of the reference (a real inductor compile here)."""
    jobs = [Job(name, relu_problem, cases.CORRECT) for name in ("a", "b")]
    config = cpu_config.replace(workers_per_device=1, reference_compile="same_process")
    verdicts = evaluate_many(jobs, config)
    assert [v["verdict"] for v in verdicts] == ["correct", "correct"]
    by_source = {v["evidence"]["timing"]["reference_compile"]["source"]: v for v in verdicts}
    first, second = by_source["same_process"], by_source["earlier_run"]
    compiled = first["evidence"]["timing"]["reference_compile"]
    assert compiled["ms"] > 0 and second["speedup_compile"] is not None
    assert second["evidence"]["timing"]["reference_compile"] == {**compiled, "source": "earlier_run"}
    derived = first["evidence"]["strict"]["signed_trial"]["numerics"]
    reused = second["evidence"]["strict"]["signed_trial"]["numerics"]
    assert "reused_from_an_earlier_run" not in derived and reused.pop("reused_from_an_earlier_run") is True
    assert reused["tolerance"] == derived["tolerance"]
    assert reused["reference_error"] == derived["reference_error"]
