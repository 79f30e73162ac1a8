"""validate.py turns evaluator verdicts into meta.json `measured` records; on a GPU, one example passes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from retrieval_corpus.corpus import load_example, load_examples
from retrieval_corpus.validate import apply, measured_from_verdict

VERDICT = {
    "verdict": "correct",
    "speedup_eager": 1.23456,
    "evidence": {
        "gpu": "NVIDIA H200",
        "timing": {"reference_eager": {"ms": 0.5}, "candidate": {"ms": 0.405}},
    },
}


def test_measured_record_from_a_verdict() -> None:
    assert measured_from_verdict(VERDICT, "2.11.0+cu130") == {
        "gpu": "NVIDIA H200",
        "torch": "2.11.0+cu130",
        "speedup_eager": 1.2346,
        "ms_eager": 0.5,
        "ms_candidate": 0.405,
        "verdict": "correct",
    }
    failed = measured_from_verdict({"verdict": "compile_error", "evidence": {"gpu": "NVIDIA H200"}}, "x")
    assert failed["verdict"] == "compile_error" and failed["speedup_eager"] is None


def test_apply_writes_meta_json(tmp_path: Path) -> None:
    example = load_examples()[0]
    copy = tmp_path / example.id
    shutil.copytree(example.path, copy)
    results = tmp_path / "results.jsonl"
    results.write_text(json.dumps({"job_id": example.id, "torch": "2.11.0+cu130", **VERDICT}) + "\n")
    assert apply(results, root=tmp_path) == 0
    reloaded = load_example(copy)
    assert reloaded.measured["verdict"] == "correct" and reloaded.speedup == 1.2346
    assert json.loads((copy / "meta.json").read_text())["title"] == example.title


@pytest.mark.gpu
@pytest.mark.slow
def test_one_example_passes_the_strict_check_on_gpu() -> None:
    from evaluator.api import EvalConfig, evaluate
    from evaluator.problem import problem_from_source

    example = next(e for e in load_examples() if e.id == "activation_silu_gridstride")
    config = EvalConfig(reference_compile="off", timing_trials=10)
    verdict = evaluate(problem_from_source(example.reference, name=example.id), example.solution, config)
    assert verdict["verdict"] == "correct", verdict.get("log_tail")
    assert verdict["speedup_eager"] is not None
