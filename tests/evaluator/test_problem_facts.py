"""What a batch learns about a problem from one run and hands to the problem's later runs."""

from __future__ import annotations

from pathlib import Path

from evaluator.api import _ProblemFacts, _problems_interleaved, _State
from evaluator.config import EvalConfig
from evaluator.jobs import Job
from evaluator.problem import load_problem

PROBLEMS = Path(__file__).resolve().parent / "problems"
TOLERANCES = {"standard": {"outputs": [[1e-7, 1.0, 3.2e-6]], "skipped": None, "trials": 2, "seconds": 0.1}}


def _states() -> list[_State]:
    relu, tiny = load_problem(PROBLEMS / "relu.py"), load_problem(PROBLEMS / "tiny_relu.py")
    facts = _ProblemFacts()
    jobs = [Job(f"r{i}", relu, "") for i in range(3)] + [Job(f"t{i}", tiny, "") for i in range(2)]
    return [_State(job, EvalConfig(backend="cpu"), facts=facts) for job in jobs]


def test_one_job_of_each_problem_in_turn() -> None:
    states = _states()
    assert [states[i].job.job_id for i in _problems_interleaved(states)] == ["r0", "t0", "r1", "t1", "r2"]


def test_tolerances_are_learnt_from_a_finished_intact_run_of_the_same_problem_and_config() -> None:
    r0, r1, _, t0, _ = _states()
    facts = r0.facts
    facts.learn(r0, {"stage": "checked", "tolerances": TOLERANCES})  # cut short: not learnt
    facts.learn(r0, {"stage": "done", "tolerances": TOLERANCES, "strict_failures": ["judge_tampered"]})
    assert facts.tolerances(r1) is None
    facts.learn(r0, {"stage": "done", "tolerances": TOLERANCES, "strict_failures": ["input_mutation"]})
    assert facts.tolerances(r1) == TOLERANCES and facts.tolerances(t0) is None
    r1.config = r1.config.replace(numerics_factor=8.0)  # another configuration derives its own
    assert facts.tolerances(r1) is None


def test_the_reference_s_compile_time_is_learnt_once_measured_in_a_run() -> None:
    r0, r1, *_ = _states()
    measured = {"ms": 0.5, "source": "same_process", "compile_seconds": 12.0}
    r0.facts.learn(r0, {"stage": "done", "timing": {"reference_compile": {"ms": 0.4, "source": "baseline"}}})
    assert r0.facts.compiled(r1) is None  # from the baseline file: every run reads it there
    r0.facts.learn(r0, {"stage": "done", "timing": {"reference_compile": measured}})
    assert r0.facts.compiled(r1) == measured
