"""benchmarks.ruled: a run's programs cut back into their bodies and sent again on the ruled shapes."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.regions import region_job
from benchmarks.ruled import RULED, main, summarise
from evaluator.problem import load_problems
from regions.export import Written
from regions.offering import offered

SUM = "for (int64_t k = 0; k < K; ++k) result += A(k) * B(k);"
STORES = SUM + "\np_out[i] = result;"  # touches memory itself: stays on its first contract


def _job(kernelbench_dir: Path, pid: int, body: str) -> dict:
    problem = next(iter(load_problems(kernelbench_dir / "level1", ids=[pid])))
    ((region, first),), _ = offered(problem.source, "moderate")
    return region_job(f"zero_shot:L1/{pid}|p{pid}/r0s0", problem, [Written(region, first, body)])


def test_jobs_send_each_program_and_its_bodies_on_the_ruled_shapes(
    kernelbench_dir: Path, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    run.mkdir()
    jobs = [_job(kernelbench_dir, 1, SUM), _job(kernelbench_dir, 4, SUM), _job(kernelbench_dir, 7, STORES)]
    (run / "jobs.jsonl").write_text("".join(json.dumps(j) + "\n" for j in jobs))
    out = tmp_path / "ruled.jsonl"
    assert main(["jobs", "--run", str(run), "--jobs", str(out)]) == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    ids = [line["job_id"] for line in lines]
    assert ids == [
        jobs[0]["job_id"],
        jobs[0]["job_id"] + RULED,
        jobs[1]["job_id"],
        jobs[1]["job_id"] + RULED,
        jobs[2]["job_id"],
    ]
    assert lines[0]["code"] == jobs[0]["code"] and "block=" not in lines[0]["code"]
    assert "block=(256, 1, 1)" in lines[1]["code"] and "kg_total[8][8]" in lines[1]["code"]
    assert "grid=(2048, 1, 1)" in lines[3]["code"]  # the matrix times a vector: a block per output


def test_the_summary_counts_each_setup_with_the_first_program_where_nothing_moved() -> None:
    def verdict(job_id: str, ok: bool, eager: float) -> dict:
        return {
            "job_id": job_id,
            "verdict": "correct" if ok else "wrong_output",
            "counted": "strict",
            "speedup_eager": eager,
            "speedup_compile": eager,
        }

    ids = ["s:L1/a|a/r0s0", "s:L2/b|b/r0s0", "s:L2/c|c/r0s0", "s:L3/d|d/r0s0"]
    sent = [ids[0], ids[0] + RULED, ids[1], ids[2], ids[2] + RULED, ids[3], ids[3] + RULED]
    summary = summarise(
        [
            verdict(ids[0], True, 0.1),
            verdict(ids[0] + RULED, True, 0.5),
            verdict(ids[1], True, 1.2),  # nothing moved: its ruled program is this one
            verdict(ids[2], True, 1.0),
            verdict(ids[2] + RULED, False, 0.0),
            verdict(ids[3], True, 1.0),  # its ruled program not judged yet: left out
        ],
        sent,
    )
    assert summary["first"] | {"geomean_eager": None} == {
        "tasks": 3,
        "strict": 3,
        "faster_eager": 1,
        "faster_compile": 1,
        "geomean_eager": None,
    }
    assert summary["ruled"]["strict"] == 2 and summary["ruled"]["faster_eager"] == 1
    assert [r["task"] for r in summary["rows"]] == ["L1/a", "L2/b", "L2/c"]


def test_the_job_ids_come_from_a_jobs_file_or_a_list_of_them(tmp_path: Path) -> None:
    from benchmarks.ruled import sent_ids

    (tmp_path / "jobs.jsonl").write_text('{"job_id": "a", "code": "x"}\n{"job_id": "a/ruled"}\n')
    (tmp_path / "ids.json").write_text('["a", "a/ruled"]')
    assert sent_ids(tmp_path / "jobs.jsonl") == sent_ids(tmp_path / "ids.json") == ["a", "a/ruled"]
