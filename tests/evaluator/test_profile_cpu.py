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
