"""The LLM throughput benchmark runs end to end on the real model and writes its JSON and plot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import llm_throughput
from nodes.model.store import ModelStoreError, embedded_model_path

pytestmark = pytest.mark.slow


def test_benchmark_writes_measured_results(tmp_path: Path, kernelbench_dir: Path) -> None:
    try:
        embedded_model_path()
    except ModelStoreError as exc:
        pytest.skip(f"embedded model not set up: {exc}")
    problem = kernelbench_dir / "level1" / "5_Matrix_scalar_multiplication.py"
    code = llm_throughput.main(
        ["-n", "2", "--max-tokens", "4", "--problem", str(problem), "--out", str(tmp_path)]
    )
    result = json.loads((tmp_path / "llm_throughput.json").read_text())
    assert (tmp_path / "llm_throughput.png").stat().st_size > 1000
    first, second = result["samples"]
    assert first["prompt_eval_tokens"] > 100 and first["prompt_seconds"] > 0
    assert result["control"]["prompt_eval_tokens"] > 0.5 * first["prompt_eval_tokens"]
    assert result["best_of_n"]["met"] is (second["prompt_seconds"] < 0.1 * first["prompt_seconds"])
    assert code == (0 if result["best_of_n"]["met"] else 1)
    assert result["prompt_tokens_per_s"] > 0 and result["generation_tokens_per_s"] > 0
