"""Worker phase `build`: compile what a candidate compiles, with the GPU hidden (builds run in parallel)."""

from __future__ import annotations

import ast
from typing import Any

from evaluator import guard
from evaluator.config import EvalConfig
from evaluator.runtime import Result, error_info, load_module, setup


def run_build(spec: dict[str, Any], config: EvalConfig, result: Result) -> None:
    """Compile what the candidate compiles, without a GPU; only build failures count here.

    Every load_inline call whose arguments are constants is built first, all at once (a candidate with
    four extensions would otherwise pay four nvcc runs back to back); executing the module afterwards
    finds them built and catches whatever the constant analysis could not see.
    """
    recorder, scratch = setup(spec, config)
    from torch.utils import cpp_extension

    module_error = None
    guard.Guard.active = True
    try:
        _prebuild_parallel(spec["candidate"], cpp_extension.load_inline)
        if recorder.error is None:
            try:
                load_module("kg_candidate", spec["candidate"], scratch)
            except BaseException as exc:  # noqa: BLE001 - any candidate failure is data, not a worker crash
                module_error = error_info(exc)
    finally:
        guard.Guard.active = False
    result.update(
        builds=recorder.builds,
        build_error=recorder.error,
        module_error=module_error,
        kernel_names=sorted(recorder.kernel_names),
    )


def _prebuild_parallel(source: str, builder: Any) -> None:
    """Build, concurrently, every load_inline call (module level or inside a function) with constant args."""
    from concurrent.futures import ThreadPoolExecutor

    calls = _constant_build_calls(source)
    if not calls:
        return

    def build(call: tuple[list[Any], dict[str, Any]]) -> None:
        try:
            builder(*call[0], **call[1])
        except Exception:  # noqa: BLE001 - the build recorder keeps the error
            pass

    with ThreadPoolExecutor(max_workers=min(8, len(calls))) as pool:
        list(pool.map(build, calls))


def _constant_build_calls(source: str) -> list[tuple[list[Any], dict[str, Any]]]:
    tree = ast.parse(source)
    imported = any(
        isinstance(n, ast.ImportFrom)
        and n.module == "torch.utils.cpp_extension"
        and any(a.name == "load_inline" for a in n.names)
        for n in ast.walk(tree)
    )
    module_consts = _assigned_constants(tree.body, {})
    scopes: list[tuple[ast.AST, dict[str, Any]]] = [(tree, {})]
    scopes += [
        (fn, _assigned_constants(list(ast.walk(fn)), module_consts))
        for fn in ast.walk(tree)
        if isinstance(fn, ast.FunctionDef)
    ]
    seen: set[str] = set()
    calls = []
    for scope, local in scopes:
        for node in ast.walk(scope):
            if not isinstance(node, ast.Call):
                continue
            named = isinstance(node.func, ast.Name) and node.func.id == "load_inline" and imported
            attr = isinstance(node.func, ast.Attribute) and node.func.attr == "load_inline"
            if not (named or attr):
                continue
            args = [_const(a, local, module_consts) for a in node.args]
            kwargs = {k.arg: _const(k.value, local, module_consts) for k in node.keywords if k.arg}
            if _MISSING in args or _MISSING in kwargs.values():
                continue
            ident = repr((args, sorted(kwargs.items())))
            if ident not in seen:
                seen.add(ident)
                calls.append((args, kwargs))
    return calls


def _assigned_constants(nodes: list[ast.AST], glob: dict[str, Any]) -> dict[str, Any]:
    """Names assigned a constant value (in order), given the enclosing constants."""
    found: dict[str, Any] = {}
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = _const(node.value, found, glob)
            if value is not _MISSING:
                found[node.targets[0].id] = value
    return found


_MISSING = object()


def _const(node: ast.expr, local: dict[str, Any], glob: dict[str, Any]) -> Any:
    """Evaluate literals, names bound to literals, lists/tuples and string concatenation; else _MISSING."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        value = local.get(node.id, glob.get(node.id, _MISSING))
        return value if isinstance(value, str | int | float | bool | list | tuple | type(None)) else _MISSING
    if isinstance(node, ast.List | ast.Tuple):
        items = [_const(e, local, glob) for e in node.elts]
        return (
            _MISSING if _MISSING in items else (list(items) if isinstance(node, ast.List) else tuple(items))
        )
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _const(node.left, local, glob), _const(node.right, local, glob)
        if (
            isinstance(left, str)
            and isinstance(right, str)
            or isinstance(left, list)
            and isinstance(right, list)
        ):
            return left + right
    return _MISSING
