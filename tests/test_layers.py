"""The house's floors, checked on the source: imports run one way, down the floors, and no module circle.

evaluator (the oracle: what a GPU host runs, torch + stdlib) < regions (the region framework) <
retrieval_corpus < tools < nodes < graph < run.py and benchmarks. A GPU host needs only `evaluator/` and
torch, so nothing that authors candidates (fx tracing, partitions, contracts) may live or be imported there.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FLOORS = {
    "evaluator": 0,
    "regions": 1,
    "retrieval_corpus": 2,
    "tools": 3,
    "nodes": 4,
    "graph": 5,
    "benchmarks": 6,
    "run": 6,
}


def _modules() -> dict[str, Path]:
    """Dotted name -> file of every project module (tests aside)."""
    found = {"run": REPO / "run.py"}
    for package in FLOORS:
        for path in (REPO / package).rglob("*.py") if (REPO / package).is_dir() else ():
            name = ".".join(path.relative_to(REPO).with_suffix("").parts)
            found[name.removesuffix(".__init__")] = path
    return found


MODULES = _modules()


def _imported(name: str, path: Path) -> list[str]:
    """Every name `name` imports, at any depth of its code (a lazy import is an import too), absolute."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            for alias in node.names:  # `from package import module` imports the module
                names.append(f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base)
    return names


def _project_module(name: str) -> str | None:
    """The project module an imported name lives in (None: not the project's)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


IMPORTS = {
    name: {m for m in map(_project_module, _imported(name, path)) if m and m != name}
    for name, path in MODULES.items()
}


def _floor(module: str) -> int:
    return FLOORS[module.split(".")[0]]


def test_the_floors_are_read_from_real_modules() -> None:
    for package in FLOORS:
        assert any(m.split(".")[0] == package for m in MODULES), package
    assert any(m.startswith("regions.") for m in IMPORTS["nodes.region_generation"])  # imports are parsed


def test_imports_run_down_the_floors() -> None:
    upward = sorted(
        f"{module} imports {target}"
        for module, targets in IMPORTS.items()
        for target in targets
        if module.split(".")[0] != target.split(".")[0] and _floor(target) >= _floor(module)
    )
    assert not upward, "\n".join(upward)


# The one exception: `run --ray` fans a batch out over a Ray cluster (the optional ray extra), imported
# lazily there alone, so the oracle still runs with torch alone.
OPTIONAL_EXTRAS = {"evaluator.ray_fanout": {"ray"}}


def test_the_oracle_needs_only_torch_and_the_standard_library() -> None:
    foreign = sorted(
        f"{module} imports {name}"
        for module, path in MODULES.items()
        if module.startswith("evaluator")
        for name in _imported(module, path)
        if not _project_module(name)
        and name.split(".")[0] not in sys.stdlib_module_names
        and name.split(".")[0] != "torch"
        and name.split(".")[0] not in OPTIONAL_EXTRAS.get(module, set())
    )
    assert not foreign, "\n".join(foreign)


def test_an_optional_extra_is_imported_lazily() -> None:
    """Importing the module must not import the extra: only calling one of its functions does."""
    for module, extras in OPTIONAL_EXTRAS.items():
        tree = ast.parse(MODULES[module].read_text())
        functions = [f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)]
        lazy = {id(n) for f in functions for n in ast.walk(f)}
        eager = [n.lineno for n in ast.walk(tree) if id(n) not in lazy and _import_roots(n) & extras]
        assert not eager, f"{module} imports {extras} at module level, lines {eager}"


def _import_roots(node: ast.AST) -> set[str]:
    if isinstance(node, ast.Import):
        return {alias.name.split(".")[0] for alias in node.names}
    if isinstance(node, ast.ImportFrom) and not node.level:
        return {(node.module or "").split(".")[0]}
    return set()


@pytest.mark.parametrize("authoring", ["torch.fx", "torch.export", "regions"])
def test_no_authoring_code_under_the_oracle(authoring: str) -> None:
    """Tracing, partitioning and contract text belong to the region framework; the oracle judges."""
    found = sorted(
        f"{module} imports {name}"
        for module, path in MODULES.items()
        if module.startswith("evaluator")
        for name in _imported(module, path)
        if name == authoring or name.startswith(authoring + ".")
    )
    assert not found, "\n".join(found)
    texts = [p.read_text() for m, p in MODULES.items() if m.startswith("evaluator")]
    assert not any("symbolic_trace" in t or "fx.Graph" in t for t in texts)


def test_no_module_circle() -> None:
    """Tarjan's strongly connected components over module imports: every one a single module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in IMPORTS[module]:
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = stack[stack.index(module) :]
            del stack[stack.index(module) :]
            if len(component) > 1:
                circles.append(sorted(component))

    for module in IMPORTS:
        if module not in index:
            visit(module)
    assert not circles, circles


def test_nodes_do_not_choose_the_format() -> None:
    """Whole programs and regions are picked when a graph is built (graph.formats), not tested in nodes."""
    tested = sorted(
        str(p.relative_to(REPO))
        for m, p in MODULES.items()
        if m.startswith("nodes") and ("format ==" in p.read_text() or "format !=" in p.read_text())
    )
    assert not tested, tested
