from pathlib import Path

from evaluator import baseline
from evaluator.problem import problem_from_source

SOURCE = "class Model: pass\ndef get_inputs(): return []\ndef get_init_inputs(): return []\n"
TINY = """import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x) * 2


def get_inputs():
    return [torch.randn(64, 64)]


def get_init_inputs():
    return []
"""


def _problem():
    return problem_from_source(SOURCE, name="p", level=1, problem_id=1)


def test_baseline_is_keyed_by_gpu_torch_and_problem(tmp_path: Path) -> None:
    path = str(tmp_path / "base.json")
    prob = problem_from_source(SOURCE, name="p", level=1, problem_id=3)
    baseline.record(path, {prob.key: {"ms_eager": 2.0, "ms_compile": 1.5}}, "NVIDIA H200", "2.11.0+cu130")
    assert baseline.lookup(path, "NVIDIA H200", prob, "2.11.0+cu130")["ms_compile"] == 1.5
    assert baseline.lookup(path, "NVIDIA H200", prob, "2.99")["ms_eager"] == 2.0  # the only torch recorded
    assert baseline.lookup(path, "NVIDIA H100", prob, "2.11.0+cu130") is None
    changed = problem_from_source(SOURCE + "N = 2\n", name="p", level=1, problem_id=3)
    assert baseline.lookup(path, "NVIDIA H200", changed, "2.11.0+cu130") is None  # sizes changed: no match


def test_committed_h200_baseline_has_the_thirty_problems_eager_and_compiled() -> None:
    import json

    data = json.loads(
        (Path(__file__).resolve().parents[2] / "benchmarks" / "baselines" / "h200.json").read_text()
    )
    entries = data["NVIDIA H200"]["2.11.0+cu130"]
    assert len(entries) == 30 and all(e["ms_eager"] > 0 and e["ms_compile"] > 0 for e in entries.values())


def test_record_merges_field_by_field(tmp_path: Path) -> None:
    """A later compile-only measurement must not erase the eager time on record."""
    prob = _problem()
    path = str(tmp_path / "b.json")
    first = {"ms_eager": 2.0, "ms_compile": None, "compile_note": "deadline"}
    baseline.record(path, {prob.key: first}, "G", "T")
    baseline.record(path, {prob.key: {"ms_compile": 1.5, "compile_note": None}}, "G", "T")
    assert baseline.recorded(path, "G", "T")[prob.key] == first | {"ms_compile": 1.5, "compile_note": None}


def test_baseline_cli_resumes_measuring_only_what_is_missing(tmp_path: Path) -> None:
    """Budget 0 times eager only; the next run keeps that eager time and only tries compile again."""
    import json
    import subprocess
    import sys

    (tmp_path / "kb" / "level1").mkdir(parents=True)
    (tmp_path / "kb" / "level1" / "1_Tiny_relu.py").write_text(TINY)
    out = tmp_path / "baseline.json"
    cmd = [sys.executable, "-m", "evaluator", "baseline", str(tmp_path / "kb"), "--out", str(out)]
    cmd += ["--backend", "cpu", "--budget-s", "0", "--cache-dir", str(tmp_path / "cache")]
    cmd += ["--config", '{"timing_trials": 3, "warmup": 1}']

    def entry() -> dict:
        (table,) = json.loads(out.read_text())["cpu"].values()
        (only,) = table.values()
        return only

    first = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr[-2000:]
    eager = entry()["ms_eager"]
    assert eager > 0 and entry()["compile_note"] == "deadline"
    second = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0 and "eager on record" in second.stderr, second.stderr[-2000:]
    assert entry()["ms_eager"] == eager  # not measured again
