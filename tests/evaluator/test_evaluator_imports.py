"""evaluator/ must run on GPU hosts that have torch and nothing else of the project's dependencies."""

import ast
import sys
from pathlib import Path

import evaluator

ALLOWED = set(sys.stdlib_module_names) | {"torch", "evaluator"}
OPTIONAL = {"ray_fanout.py": {"ray"}}  # the ray extra, imported lazily by `run --ray` alone


def test_evaluator_imports_only_torch_and_the_standard_library() -> None:
    root = Path(evaluator.__file__).parent
    bad = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            allowed = ALLOWED | OPTIONAL.get(path.name, set())
            bad += [f"{path.name}: {n}" for n in names if n.split(".")[0] not in allowed]
    assert bad == []
