"""benchmarks/regions.py: contracts for real problems, a scripted model's bodies through the real local
checks (NVRTC), resumable samples and the report."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from benchmarks import regions as bench
from evaluator.verdict import make
from nodes.model.llm import Completion, use_model

BODIES = {"t1 = A * s": "```cuda\nfloat t1 = A * s;\n```", "t6 = t5 / 2.0": "```cuda\nfloat t1 = oops;\n```"}


class ByContract:
    """Answers by the contract: right for the matrix-scalar multiply, wrong for the level 2 chain."""

    def __init__(self) -> None:
        self.calls = 0

    def chat(self, messages: list[dict[str, str]], **kwargs: Any) -> Completion:
        self.calls += 1
        text = next(body for marker, body in BODIES.items() if marker in messages[-1]["content"])
        return Completion(text, prompt_tokens=500, completion_tokens=12, seconds=1.0)


def test_generate_is_resumable_and_the_report_counts_local_passes(
    tmp_path: Path, kernelbench_dir: Path
) -> None:
    suite = tmp_path / "kb"
    for level, name in (
        (1, "5_Matrix_scalar_multiplication.py"),
        (2, "2_ConvTranspose2d_BiasAdd_Clamp_Scaling_Clamp_Divide.py"),
    ):
        (suite / f"level{level}").mkdir(parents=True, exist_ok=True)
        shutil.copy(kernelbench_dir / f"level{level}" / name, suite / f"level{level}" / name)
    model = ByContract()
    with use_model(model):
        assert bench.generate(suite, tmp_path / "runs", samples=1) == 0
        calls = model.calls
        assert calls == 1 + 3  # one good answer; one bad answer and its two repairs
        assert bench.generate(suite, tmp_path / "runs", samples=1) == 0 and model.calls == calls  # resumed
        assert bench.report(tmp_path / "runs", tmp_path / "results") == 0
    rows = [json.loads(line) for line in (tmp_path / "runs" / "samples.jsonl").read_text().splitlines()]
    good = next(r for r in rows if r["level"] == 1)
    assert good["ok"] and good["kind"] == "map" and 'extern "C" __global__' in good["source"]
    assert good["emulated"] is True  # the kernel, run on the CPU on the shrunk problem, gives A * s
    summary = json.loads((tmp_path / "results" / "regions.json").read_text())
    assert (summary["levels"]["all"]["contracts"], summary["levels"]["all"]["local_ok_n1"]) == (2, 1)
    assert summary["levels"]["all"]["emulated_n1"] == 1
    assert summary["levels"]["2"]["answers_per_sample"] == 3 and summary["strict_gpu"] is None
    assert (tmp_path / "results" / "regions.png").stat().st_size > 0
    assert bench.write_jobs(suite, tmp_path / "runs", tmp_path / "jobs.jsonl") == 0
    jobs = [json.loads(line) for line in (tmp_path / "jobs.jsonl").read_text().splitlines()]
    assert len(jobs) == 2 and all(
        "class ModelNew" in j["code"] and j["candidate"].startswith("```") for j in jobs
    )
    # the region kind by default: the NVRTC loader, and the region the worker checks the kernel against
    assert all("load_region_kernel(" in j["code"] and j["regions"][0]["spec"]["steps"] for j in jobs)
    # the standalone KernelBench program: load_inline, and no region markers (no per-region check)
    assert bench.write_jobs(suite, tmp_path / "runs", tmp_path / "exported.jsonl", "load_inline") == 0
    exported = [json.loads(line) for line in (tmp_path / "exported.jsonl").read_text().splitlines()]
    assert len(exported) == 2 and all("load_inline(" in j["code"] and "regions" not in j for j in exported)
    # the GPU host's verdicts, as `python -m evaluator run` writes them, complete the table
    good_id = next(j["job_id"] for j in jobs if "Matrix_scalar" in j["job_id"])
    verdicts = [
        {
            "job_id": j["job_id"],
            **make(
                "correct" if j["job_id"] == good_id else "wrong_output",
                speedup_eager=0.9 if j["job_id"] == good_id else None,
            ),
        }
        for j in jobs
    ]
    (tmp_path / "verdicts.jsonl").write_text("".join(json.dumps(v) + "\n" for v in verdicts))
    assert bench.report(tmp_path / "runs", tmp_path / "results", tmp_path / "verdicts.jsonl") == 0
    judged = json.loads((tmp_path / "results" / "regions.json").read_text())
    assert (judged["levels"]["all"]["judged_n1"], judged["levels"]["all"]["strict_n1"]) == (2, 1)
    assert judged["strict_gpu"]["speedup_eager_of_correct"] == [0.9]
    assert judged["levels"]["all"]["geomean_speedup_eager"] == 0.9
    scalar = next(k for k in judged["greedy"] if "Matrix_scalar" in k)
    assert judged["greedy"][scalar]["region_kind"] == "correct"
