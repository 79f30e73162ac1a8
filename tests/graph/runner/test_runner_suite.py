"""Task selection: demo tasks, KernelBench directories, range parsing."""

from __future__ import annotations

import importlib.util

import pytest
import torch

from graph.demo_tasks import demo_paths
from graph.runner.suite import SuiteError, parse_ranges, select_tasks, task_key


def test_parse_ranges() -> None:
    assert parse_ranges("1-3,5") == [1, 2, 3, 5]
    assert parse_ranges(" 2 ") == [2]
    assert parse_ranges(None) is None and parse_ranges("all") is None
    with pytest.raises(SuiteError):
        parse_ranges("3-1")
    with pytest.raises(SuiteError):
        parse_ranges("one")


def test_demo_tasks_are_six_level_zero_tasks_with_unique_keys() -> None:
    tasks = select_tasks()
    assert [t["problem_id"] for t in tasks] == [1, 2, 3, 4, 5, 6]
    assert {t["level"] for t in tasks} == {0}
    assert len({task_key(t) for t in tasks}) == 6
    assert [t["problem_id"] for t in select_tasks(tasks="2,4-5")] == [2, 4, 5]


@pytest.mark.parametrize("path", demo_paths(), ids=lambda p: p.stem)
def test_demo_task_runs_quickly_and_is_not_degenerate(path) -> None:
    """Each demo task builds and runs; its output is not constant (so a zeros kernel cannot pass)."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    torch.manual_seed(42)
    model = module.Model(*module.get_init_inputs())
    with torch.no_grad():
        out = model(*module.get_inputs())
    assert out.numel() >= 64
    assert torch.isfinite(out).all()
    assert float(out.std()) > 1e-3


def test_kernelbench_selection(kernelbench_dir) -> None:
    tasks = select_tasks(kernelbench_dir, levels="1,3", problems="1-2")
    assert [task_key(t) for t in tasks] == [
        "L1/Square_matrix_multiplication_",
        "L1/Standard_matrix_multiplication_",
        "L3/MLP",
        "L3/ShallowWideMLP",
    ]
    assert all("class Model" in t["source"] for t in tasks)
    with pytest.raises(SuiteError):
        select_tasks(kernelbench_dir, levels="9")


def test_a_broken_problem_goes_to_on_skip_or_is_an_error(kernelbench_dir, tmp_path) -> None:
    (tmp_path / "level2").mkdir()
    good = next((kernelbench_dir / "level2").glob("1_*.py"))
    (tmp_path / "level2" / good.name).write_text(good.read_text())
    (tmp_path / "level2" / "2_Empty.py").write_text("")
    skipped: list[str] = []
    tasks = select_tasks(tmp_path, on_skip=skipped.append)
    assert [t["problem_id"] for t in tasks] == [1]
    assert len(skipped) == 1 and "2_Empty.py: missing" in skipped[0]
    with pytest.raises(SuiteError, match="2_Empty.py: missing"):
        select_tasks(tmp_path)
