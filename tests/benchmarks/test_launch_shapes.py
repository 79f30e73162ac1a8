"""benchmarks/launch_shapes.py: each greedy product body goes out on both shapes; the report compares them."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.launch_shapes import main, summarise


def test_jobs_send_each_product_body_on_both_shapes(kernelbench_dir: Path, tmp_path: Path) -> None:
    body = "result = 0.0f;\nfor (int64_t k = 0; k < K; ++k) result += A(k) * B(k);"
    rows = [
        {
            "problem": "l1_p1_Square_matrix_multiplication__7626d611b8f2",
            "sample": 0,
            "kind": "contraction",
            "body": body,
        },
        {
            "problem": "l1_p1_Square_matrix_multiplication__7626d611b8f2",
            "sample": 1,
            "kind": "contraction",
            "body": body,
        },
        {
            "problem": "l1_p4_Matrix_vector_multiplication__5f1476dfcbd2",
            "sample": 0,
            "kind": "contraction",
            "body": body,
        },
    ]
    samples = tmp_path / "samples.jsonl"
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    jobs = tmp_path / "jobs.jsonl"
    assert (
        main(["jobs", "--kernelbench", str(kernelbench_dir), "--samples", str(samples), "--jobs", str(jobs)])
        == 0
    )
    lines = [json.loads(line) for line in jobs.read_text().splitlines()]
    assert [j["job_id"].rsplit("/", 1)[1] for j in lines] == ["first", "tiled"]  # greedy only; no matvec
    assert "block=(16, 16, 1)" in lines[1]["code"] and "block=" not in lines[0]["code"]


def test_the_summary_compares_shapes_only_where_both_are_strictly_correct() -> None:
    def v(job: str, strict: bool, eager: float) -> dict:
        return {
            "job_id": job,
            "verdict": "correct" if strict else "wrong_output",
            "correct_strict": strict,
            "speedup_eager": eager,
        }

    summary = summarise(
        [v("a/first", True, 0.2), v("a/tiled", True, 0.8), v("b/first", True, 0.1), v("b/tiled", False, 0.5)]
    )
    assert summary["compared"] == 1 and summary["geomean_tiled_over_first"] == 4.0
    assert "tiled_over_first" not in summary["problems"][1]
