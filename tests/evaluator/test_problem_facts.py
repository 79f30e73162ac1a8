"""What a batch learns about a problem from one run and hands to the problem's later runs."""

from __future__ import annotations

from evaluator.config import EvalConfig
from evaluator.problem_facts import ProblemFacts, interleaved

TOLERANCES = {"standard": {"outputs": [[1e-7, 1.0, 3.2e-6]], "skipped": None, "trials": 2, "seconds": 0.1}}
CONFIG = EvalConfig(backend="cpu")


def test_one_job_of_each_problem_in_turn() -> None:
    problems = ["relu", "relu", "relu", "tiny", "tiny"]
    assert interleaved(problems) == [0, 3, 1, 4, 2]


def test_tolerances_are_learnt_from_a_finished_intact_run_of_the_same_problem_and_config() -> None:
    facts = ProblemFacts()
    facts.learn("relu", CONFIG, {"stage": "checked", "tolerances": TOLERANCES})  # cut short: not learnt
    facts.learn(
        "relu", CONFIG, {"stage": "done", "tolerances": TOLERANCES, "strict_failures": ["judge_tampered"]}
    )
    assert facts.tolerances("relu", CONFIG) is None
    facts.learn(
        "relu", CONFIG, {"stage": "done", "tolerances": TOLERANCES, "strict_failures": ["input_mutation"]}
    )
    assert facts.tolerances("relu", CONFIG) == TOLERANCES and facts.tolerances("tiny", CONFIG) is None
    assert facts.tolerances("relu", CONFIG.replace(numerics_factor=8.0)) is None  # another config: its own


def test_the_reference_s_compile_time_is_learnt_once_measured_in_a_run() -> None:
    facts = ProblemFacts()
    measured = {"ms": 0.5, "source": "same_process", "compile_seconds": 12.0}
    facts.learn(
        "relu", CONFIG, {"stage": "done", "timing": {"reference_compile": {"ms": 0.4, "source": "baseline"}}}
    )
    assert facts.compiled("relu", CONFIG) is None  # from the baseline file: every run reads it there
    facts.learn("relu", CONFIG, {"stage": "done", "timing": {"reference_compile": measured}})
    assert facts.compiled("relu", CONFIG) == measured
