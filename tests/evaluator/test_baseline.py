from pathlib import Path

from evaluator import baseline
from evaluator.problem import problem_from_source

SOURCE = "class Model: pass\ndef get_inputs(): return []\ndef get_init_inputs(): return []\n"


def test_baseline_is_keyed_by_gpu_torch_and_problem(tmp_path: Path) -> None:
    path = str(tmp_path / "base.json")
    prob = problem_from_source(SOURCE, name="p", level=1, problem_id=3)
    baseline.record(path, {prob.key: {"ms_eager": 2.0, "ms_compile": 1.5}}, "NVIDIA H200", "2.11.0+cu130")
    assert baseline.lookup(path, "NVIDIA H200", prob, "2.11.0+cu130")["ms_compile"] == 1.5
    assert baseline.lookup(path, "NVIDIA H200", prob, "2.99")["ms_eager"] == 2.0  # the only torch recorded
    assert baseline.lookup(path, "NVIDIA H100", prob, "2.11.0+cu130") is None
    changed = problem_from_source(SOURCE + "N = 2\n", name="p", level=1, problem_id=3)
    assert baseline.lookup(path, "NVIDIA H200", changed, "2.11.0+cu130") is None  # sizes changed: no match


def test_committed_h200_baseline_has_the_thirty_problems() -> None:
    import json

    data = json.loads(
        (Path(__file__).resolve().parents[2] / "benchmarks" / "baselines" / "h200.json").read_text()
    )
    entries = data["NVIDIA H200"]["2.11.0+cu130"]
    assert len(entries) == 30 and all(e["ms_eager"] > 0 for e in entries.values())
