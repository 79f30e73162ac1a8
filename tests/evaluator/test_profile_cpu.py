import json
from pathlib import Path

from evaluator.config import EvalConfig
from evaluator.problem import load_problem, shrink_problem
from evaluator.profile import profile_problem


def test_reference_op_table_is_measured_then_cached(kernelbench_dir: Path, cpu_config: EvalConfig) -> None:
    problem = shrink_problem(load_problem(kernelbench_dir / "level2" / "1_Conv2D_ReLU_BiasAdd.py"), cap=16)
    first = profile_problem(problem, cpu_config)
    ops = [r["op"] for r in first["rows"]]
    assert {"aten::conv2d", "aten::relu", "aten::add"} <= set(ops), first
    assert ops[0] == "aten::conv2d"  # the convolution dominates
    assert abs(sum(r["share"] for r in first["rows"]) - 1.0) < 0.01
    assert "aten::conv2d" in first["text"] and not first["cached"]
    second = profile_problem(problem, cpu_config)
    assert second["cached"] and second["rows"] == first["rows"]


def test_profile_store_serves_a_profile_made_on_another_host(
    kernelbench_dir: Path, cpu_config: EvalConfig, tmp_path: Path
) -> None:
    """A deferred run reads the GPU host's profiles: the file written there is found by problem and GPU."""
    from evaluator.profile import profile_path, stored_profile

    problem = load_problem(kernelbench_dir / "level1" / "1_Square_matrix_multiplication_.py")
    assert stored_profile(tmp_path, problem, "NVIDIA H200") is None
    row = {"op": "aten::matmul", "us": 2800.0, "share": 1.0, "calls": 1, "shapes": "", "kernels": []}
    profile_path(tmp_path, problem, "NVIDIA H200").write_text(json.dumps({"rows": [row], "text": "| mm |"}))
    found = stored_profile(tmp_path, problem, "NVIDIA H200")
    assert found is not None and found["rows"] == [row] and found["cached"]
    assert stored_profile(tmp_path, problem, "NVIDIA H100") is None


def test_profile_cli_fills_a_store_for_a_whole_directory(
    kernelbench_dir: Path, eval_cache: Path, tmp_path: Path
) -> None:
    import subprocess
    import sys

    from evaluator.problem import load_problems
    from evaluator.profile import profile_path

    root = tmp_path / "kb"
    (root / "level2").mkdir(parents=True)
    for name in ("1_Conv2D_ReLU_BiasAdd.py", "9_Matmul_Subtract_Multiply_ReLU.py"):
        source = shrink_problem(load_problem(kernelbench_dir / "level2" / name), cap=16).source
        (root / "level2" / name).write_text(source)
    store = tmp_path / "store"
    cmd = [sys.executable, "-m", "evaluator", "profile", str(root), "--out", str(store), "--backend", "cpu"]
    cmd += ["--cache-dir", str(eval_cache), "--ids", "9"]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    first, ninth = load_problems(root)
    assert not profile_path(store, first, "cpu").exists()  # --ids 9 left problem 1 out
    assert "aten::linear" in json.loads(profile_path(store, ninth, "cpu").read_text())["text"]
