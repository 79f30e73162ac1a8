"""benchmarks/launch_shapes.py: each greedy body goes out on its first contract and every shape it moves to;
the report compares them and says what the model's choices measured."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.launch_shapes import main, summarise


def test_jobs_send_each_greedy_body_on_its_first_contract_and_its_shapes(
    kernelbench_dir: Path, tmp_path: Path
) -> None:
    body = "for (int64_t k = 0; k < K; ++k) result += A(k) * B(k);"
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
        {
            "problem": "l1_p5_Matrix_scalar_multiplication_f4d52425a8f7",
            "sample": 0,
            "kind": "map",
            "body": "float t1 = A * s;",
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
    ids = [j["job_id"].rsplit("/", 1)[1] for j in lines]
    assert ids == ["first", "tiled", "blocked", "first", "dot", "first", "vector4"]  # greedy only
    assert "block=(16, 16, 1)" in lines[1]["code"] and "block=" not in lines[0]["code"]
    assert "block=(256, 1, 1)" in lines[2]["code"] and "kg_total[8][8]" in lines[2]["code"]
    assert "grid=(2048, 1, 1)" in lines[4]["code"]  # the matrix times a vector: a block per output
    assert "make_float4(" in lines[6]["code"] and "make_float4(" not in lines[5]["code"]


def test_jobs_by_rule_send_the_frameworks_own_bodies(kernelbench_dir: Path, tmp_path: Path) -> None:
    level = tmp_path / "kb" / "level1"
    level.mkdir(parents=True)
    for pid in (1, 5):
        (src,) = (kernelbench_dir / "level1").glob(f"{pid}_*.py")
        (level / src.name).write_text(src.read_text())
    jobs = tmp_path / "jobs.jsonl"
    assert main(["jobs", "--by-rule", "--kernelbench", str(tmp_path / "kb"), "--jobs", str(jobs)]) == 0
    lines = [json.loads(line) for line in jobs.read_text().splitlines()]
    assert [j["job_id"].split("_")[1] + "/" + j["job_id"].rsplit("/", 1)[1] for j in lines] == [
        "p1/first",
        "p1/tiled",
        "p1/blocked",
        "p5/first",
        "p5/vector4",
    ]
    sums = "for (int64_t k = 0; k < K; ++k) result += A(k) * B(k);"  # regions.rules' product body
    assert all(sums in j["code"] for j in lines[:3]) and "float t1 = A * s;" in lines[4]["code"]


def test_the_summary_compares_shapes_only_where_both_are_strictly_correct() -> None:
    def v(job: str, strict: bool, eager: float) -> dict:
        return {
            "job_id": job,
            "verdict": "correct" if strict else "wrong_output",
            "correct_strict": strict,
            "speedup_eager": eager,
        }

    verdicts = [
        v("a/first", True, 0.2),
        v("a/tiled", True, 0.8),
        v("b/first", True, 0.1),
        v("b/tiled", False, 0.5),
    ]
    verdicts += [v("c/first", True, 0.9), v("c/vector4", True, 0.99)]
    choices = [
        {"problem": "a", "shape": "tiled"},
        {"problem": "b", "shape": "tiled"},
        {"problem": "c", "shape": "first"},
    ]
    summary = summarise(verdicts, choices)
    assert summary["compared"] == {"tiled": 1, "vector4": 1}
    assert summary["geomean_over_first"] == {"tiled": 4.0, "vector4": 1.1}
    assert summary["problems"][1]["over_first"] == {}  # b's tiles were wrong: no ratio
    assert (summary["choices"], summary["chose_a_shape"], summary["chosen_and_faster"]) == (3, 2, 1)
