from pathlib import Path

import pytest

from evaluator.problem import (
    ProblemError,
    load_problem,
    load_problems,
    problem_from_source,
    scan_problems,
    shrink_problem,
)


def test_loads_the_thirty_kernelbench_problems(kernelbench_dir: Path) -> None:
    problems = load_problems(kernelbench_dir)
    assert len(problems) == 30
    assert {p.level for p in problems} == {1, 2, 3}
    first = problems[0]
    assert (first.level, first.problem_id, first.name) == (1, 1, "Square_matrix_multiplication_")
    assert "class Model" in first.source


def test_selects_levels_and_ids(kernelbench_dir: Path) -> None:
    picked = load_problems(kernelbench_dir, levels=[2], ids=[1, 9])
    assert [(p.level, p.problem_id) for p in picked] == [(2, 1), (2, 9)]
    assert load_problems(kernelbench_dir / "level3" / "4_LeNet5.py")[0].name == "LeNet5"


def _directory_with_a_broken_problem(kernelbench_dir: Path, root: Path) -> Path:
    (root / "level1").mkdir()
    for good in sorted((kernelbench_dir / "level1").glob("[12]_*.py")):
        (root / "level1" / good.name).write_text(good.read_text())
    (root / "level1" / "3_Broken.py").write_text("def broken(:\n")
    model_only = "import torch\nclass Model(torch.nn.Module):\n    pass\n"
    (root / "level1" / "4_Missing_inputs.py").write_text(model_only)
    return root


def test_a_scan_keeps_the_good_problems_and_says_why_each_broken_one_is_left_out(
    kernelbench_dir: Path, tmp_path: Path
) -> None:
    root = _directory_with_a_broken_problem(kernelbench_dir, tmp_path)
    problems, broken = scan_problems(root)
    assert [p.problem_id for p in problems] == [1, 2]
    assert [str(e) for e in broken] == [
        f"{root}/level1/3_Broken.py: not valid Python (invalid syntax, line 1)",
        f"{root}/level1/4_Missing_inputs.py: missing get_inputs, get_init_inputs"
        " (a KernelBench problem defines Model, get_inputs, get_init_inputs)",
    ]
    assert scan_problems(root, ids=[2]) == (problems[1:], [])  # a file left out of the selection is not read
    with pytest.raises(ProblemError, match="3_Broken.py: not valid Python"):
        load_problems(root)


def test_malformed_problem_names_what_is_missing(tmp_path: Path) -> None:
    bad = tmp_path / "1_Broken.py"
    bad.write_text("import torch\nclass Model(torch.nn.Module):\n    pass\n")
    with pytest.raises(ProblemError, match="get_inputs, get_init_inputs"):
        load_problem(bad)
    with pytest.raises(ProblemError, match="not valid Python"):
        problem_from_source("def (:", name="x")
    with pytest.raises(ProblemError, match="no such problem file"):
        load_problem(tmp_path / "absent.py")


def test_shrink_caps_sizes_and_keeps_the_model(kernelbench_dir: Path) -> None:
    prob = load_problem(kernelbench_dir / "level1" / "5_Matrix_scalar_multiplication.py")
    small = shrink_problem(prob, cap=32, N=16)
    assert "M = 32" in small.source and "N = 16" in small.source
    assert small.source.split("def get_inputs")[0].split("M =")[0] == prob.source.split("M =")[0]
    assert small.key != prob.key
    conv = shrink_problem(load_problem(kernelbench_dir / "level2" / "1_Conv2D_ReLU_BiasAdd.py"), cap=8)
    assert "kernel_size = 3" in conv.source and "height = width = 8" in conv.source
    namespace: dict = {}
    exec(compile(conv.source, "shrunk", "exec"), namespace)  # the shrunk problem still runs
    model = namespace["Model"](*namespace["get_init_inputs"]())
    assert model(*namespace["get_inputs"]()).shape == (8, 8, 6, 6)
