"""KernelBench-format problems: a module defining Model, get_inputs and get_init_inputs."""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

REQUIRED = ("Model", "get_inputs", "get_init_inputs")
_NAME = re.compile(r"^(\d+)_(.+)\.py$")


class ProblemError(ValueError):
    """A problem file that cannot be used; the message names what is wrong or missing."""


@dataclass(frozen=True)
class Problem:
    name: str
    level: int | None
    problem_id: int | None
    path: str | None
    source: str

    @property
    def key(self) -> str:
        """Stable identity for caches and baselines: level, id, name and a hash of the source."""
        digest = hashlib.sha256(self.source.encode()).hexdigest()[:12]
        return f"l{self.level}_p{self.problem_id}_{self.name}_{digest}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def validate_source(source: str, where: str) -> None:
    """Parse and check the three required top-level names, so errors surface before any process runs."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise ProblemError(f"{where}: not valid Python ({exc.msg}, line {exc.lineno})") from exc
    defined = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef):
            defined.add(node.name)
        elif isinstance(node, ast.Assign):
            defined.update(t.id for t in node.targets if isinstance(t, ast.Name))
    missing = [n for n in REQUIRED if n not in defined]
    if missing:
        raise ProblemError(
            f"{where}: missing {', '.join(missing)} (a KernelBench problem defines {', '.join(REQUIRED)})"
        )


def problem_from_source(
    source: str,
    name: str = "problem",
    level: int | None = None,
    problem_id: int | None = None,
    path: str | None = None,
) -> Problem:
    validate_source(source, path or name)
    return Problem(name=name, level=level, problem_id=problem_id, path=path, source=source)


def problem_from_dict(data: dict[str, Any]) -> Problem:
    """A problem from its dict form: a job line's or a graph task's name, level, problem_id and source."""
    if not isinstance(data, dict) or not isinstance(data.get("source"), str):
        raise ProblemError("a problem needs its file text as a string under 'source'")
    return problem_from_source(
        data["source"],
        name=data.get("name") or "problem",
        level=data.get("level"),
        problem_id=data.get("problem_id"),
        path=data.get("path"),
    )


def problem_to_dict(problem: Problem | dict[str, Any]) -> dict[str, Any]:
    """The dict form of a problem as job lines carry it (a task dict keeps just those fields)."""
    data = problem.to_dict() if isinstance(problem, Problem) else problem
    return {k: data.get(k) for k in ("name", "level", "problem_id", "source")}


def load_problem(path: str | Path) -> Problem:
    """Load one file; level and id come from KernelBench's `levelN/ID_Name.py` layout when present."""
    p = Path(path)
    if not p.is_file():
        raise ProblemError(f"{p}: no such problem file")
    name, level, problem_id = _place(p)
    return problem_from_source(p.read_text(), name=name, level=level, problem_id=problem_id, path=str(p))


def _place(path: Path) -> tuple[str, int | None, int | None]:
    """Name, level and id from the path alone, so a selection never reads the files it leaves out."""
    match = _NAME.match(path.name)
    level_match = re.match(r"^level(\d+)$", path.parent.name)
    return (
        match.group(2) if match else path.stem,
        int(level_match.group(1)) if level_match else None,
        int(match.group(1)) if match else None,
    )


def scan_problems(
    root: str | Path, levels: Iterable[int] | None = None, ids: Iterable[int] | None = None
) -> tuple[list[Problem], list[ProblemError]]:
    """The selected problems of a file or a directory (itself a level dir or holding level dirs) that load,
    and why each selected file that does not cannot be used: a user's directory may hold a broken file,
    and the others still run."""
    root = Path(root)
    if root.is_file():
        files = [root]
    elif root.is_dir():
        files = sorted(root.glob("level*/*.py")) or sorted(root.glob("*.py"))
    else:
        raise ProblemError(f"{root}: neither a problem file nor a directory")
    level_set = set(levels) if levels is not None else None
    id_set = set(ids) if ids is not None else None
    problems: list[Problem] = []
    broken: list[ProblemError] = []
    for f in files:
        _, level, problem_id = _place(f)
        if f != root and (
            f.name.startswith("_")
            or (level_set is not None and level not in level_set)
            or (id_set is not None and problem_id not in id_set)
        ):
            continue
        try:
            problems.append(load_problem(f))
        except (ProblemError, OSError, UnicodeDecodeError) as exc:
            broken.append(exc if isinstance(exc, ProblemError) else ProblemError(f"{f}: unreadable ({exc})"))
    problems.sort(key=lambda p: (p.level or 0, p.problem_id or 0, p.name))
    return problems, broken


def load_problems(
    root: str | Path, levels: Iterable[int] | None = None, ids: Iterable[int] | None = None
) -> list[Problem]:
    """Like `scan_problems`, for callers that need every selected file: the first broken one is an error."""
    problems, broken = scan_problems(root, levels, ids)
    if broken:
        raise broken[0]
    return problems


def module_sizes(source: str) -> dict[str, int]:
    """The problem's top-level integer sizes (`NAME = <int expression>`): what `shrink_problem` caps."""
    return {name: value for _, name, value in _sizes(ast.parse(source))}


def _sizes(tree: ast.Module) -> Iterator[tuple[ast.Assign, str, int]]:
    """Each top-level `NAME = <int expression>` with its name (the first, where several are assigned) and
    value."""
    for node in tree.body:
        if not isinstance(node, ast.Assign) or node.end_lineno is None:
            continue
        names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        value = _int_value(node.value)
        if value is not None and names:
            yield node, names[0], value


def shrink_problem(problem: Problem, cap: int = 64, **overrides: int) -> Problem:
    """Problem with module-level integer sizes capped at `cap` (or set by name), for CPU tests.

    KernelBench sizes target 1-15 ms on an H100 (several GiB of input); a CPU test needs them small. Only
    top-level `NAME = <int expression>` assignments change, so Model's code stays the same.
    """
    tree = ast.parse(problem.source)
    lines = problem.source.splitlines(keepends=True)
    edits: list[tuple[int, int, int, int, str]] = []
    for node, name, value in _sizes(tree):
        new = overrides.get(name, min(value, cap))
        if new != value:
            edits.append(
                (
                    node.value.lineno,
                    node.value.col_offset,
                    node.value.end_lineno,
                    node.value.end_col_offset or 0,
                    repr(new),
                )
            )
    for lineno, col, end_lineno, end_col, text in reversed(edits):
        start = lines[lineno - 1][:col]
        end = lines[end_lineno - 1][end_col:]
        lines[lineno - 1 : end_lineno] = [start + text + end]
    return replace(problem, source="".join(lines))


def _int_value(node: ast.expr) -> int | None:
    """Value of an integer literal or +,-,*,// arithmetic on them; None for anything else."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.BinOp):
        left, right = _int_value(node.left), _int_value(node.right)
        if left is None or right is None:
            return None
        ops = {ast.Add: int.__add__, ast.Sub: int.__sub__, ast.Mult: int.__mul__}
        if isinstance(node.op, ast.FloorDiv) and right:
            return left // right
        op = ops.get(type(node.op))
        return op(left, right) if op else None
    return None
