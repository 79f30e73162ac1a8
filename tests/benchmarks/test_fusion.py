"""The fusion benchmark: which problems it sends (both programs whole, by rule), and its table."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.fusion import main, summarise
from graph.runner.jsonl import read_jsonl

POOL_THEN_MAP = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, x):
        return torch.tanh(F.max_pool2d(x, 2)) * 3.0


def get_inputs():
    return [torch.randn(2, 3, 8, 8)]


def get_init_inputs():
    return []
"""

MAP_ONLY = POOL_THEN_MAP.replace("torch.tanh(F.max_pool2d(x, 2)) * 3.0", "torch.tanh(x) * 3.0")


def test_jobs_pair_the_programs_of_problems_that_fuse(tmp_path: Path) -> None:
    level = tmp_path / "set" / "level2"
    level.mkdir(parents=True)
    (level / "1_Pool_Tanh_Scale.py").write_text(POOL_THEN_MAP)
    (level / "2_Tanh_Scale.py").write_text(MAP_ONLY)  # nothing to fuse: not sent
    jobs = tmp_path / "jobs.jsonl"
    assert main(["jobs", "--jobs", str(jobs), "--sets", str(tmp_path / "set")]) == 0
    lines = list(read_jsonl(jobs))
    assert [j["job_id"].rsplit("/", 1)[1] for j in lines] == ["apart", "fused"]
    assert all("Pool_Tanh_Scale" in j["job_id"] for j in lines)
    apart, fused = (len(j["regions"]) for j in lines)
    assert (apart, fused) == (2, 1)
    assert [len(r["spec"]["steps"]) for r in lines[1]["regions"]] == [3]  # the pool, tanh and scale


def test_the_summary_compares_only_strictly_correct_pairs() -> None:
    jobs = [
        {"job_id": "fusion:a/apart", "regions": [{}, {}]},
        {"job_id": "fusion:a/fused", "regions": [{}]},
        {"job_id": "fusion:b/apart", "regions": [{}, {}]},
        {"job_id": "fusion:b/fused", "regions": [{}]},
    ]
    verdicts = [
        {"job_id": "fusion:a/apart", "correct_strict": True, "speedup_eager": 1.0},
        {"job_id": "fusion:a/fused", "correct_strict": True, "speedup_eager": 1.5},
        {"job_id": "fusion:b/apart", "correct_strict": True, "speedup_eager": 1.0},
        {"job_id": "fusion:b/fused", "correct_strict": False, "speedup_eager": 9.0},
    ]
    summary = summarise(verdicts, jobs)
    a, b = summary["problems"]
    assert a["fused_over_apart"] == 1.5 and "fused_over_apart" not in b
    assert a["apart"]["kernels"] == 2 and a["fused"]["kernels"] == 1
    assert summary["geomean_fused_over_apart"] == 1.5
    json.dumps(summary)


def test_the_report_names_the_device_the_verdicts_name(tmp_path: Path) -> None:
    jobs, verdicts = tmp_path / "jobs.jsonl", tmp_path / "verdicts.jsonl"
    jobs.write_text(json.dumps({"job_id": "fusion:a/apart", "regions": [{}, {}]}) + "\n")
    line = {"job_id": "fusion:a/apart", "correct_strict": True, "speedup_eager": 1.2}
    line["evidence"] = {"gpu": "H9"}
    verdicts.write_text(json.dumps(line) + "\n")
    out = tmp_path / "out"
    assert main(["report", "--verdicts", str(verdicts), "--jobs", str(jobs), "--out", str(out)]) == 0
    assert json.loads((out / "summary.json").read_text())["device"] == "H9"
    assert "| a | 2 / - | yes / no | 1.20x / - |" in (out / "summary.md").read_text()
