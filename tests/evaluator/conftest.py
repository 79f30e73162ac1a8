"""Evaluator fixtures: one build cache per test session, so the CPU suite builds its C++ extension once."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluator.config import EvalConfig
from evaluator.problem import Problem, load_problem

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="session")
def cpu_config(eval_cache: Path) -> EvalConfig:
    """Small, fast settings for CI's 2 cores; the checks themselves are the real ones."""
    return EvalConfig(
        backend="cpu",
        cache_dir=str(eval_cache),
        run_timeout_s=30,
        compile_timeout_s=400,
        timing_trials=5,
        warmup=1,
        reference_compile="off",
        l2_flush_bytes=1 << 20,
        compile_workers=2,
    )


@pytest.fixture(scope="session")
def relu_problem() -> Problem:
    return load_problem(HERE / "problems" / "relu.py")


@pytest.fixture(scope="session")
def tiny_problem() -> Problem:
    return load_problem(HERE / "problems" / "tiny_relu.py")
