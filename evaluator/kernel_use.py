"""Whether a candidate's forward reaches a compiled custom kernel, and which of the reference's torch ops
it still calls: the static half of "custom kernels must do the work" (the profile checks the rest at run
time). evaluator.static_checks runs it after its sandbox and hack checks; the AST helpers both use live
here.
"""

from __future__ import annotations

import ast
from typing import Any

Finding = dict[str, Any]

# Calls that compile custom kernels: torch's extension builders, and the region kind's NVRTC loader
# (evaluator.regions.launch), which the build cache records and wraps as it does an extension.
_BUILDERS = {"load_inline", "load", "load_region_kernel"}
# torch calls that only shape, allocate or move data: using them is not "doing the op in torch".
_PLUMBING = {
    "empty",
    "empty_like",
    "zeros",
    "zeros_like",
    "ones",
    "ones_like",
    "full",
    "full_like",
    "tensor",
    "as_tensor",
    "from_numpy",
    "arange",
    "empty_strided",
    "device",
    "dtype",
    "Size",
    "view",
    "reshape",
    "contiguous",
    "size",
    "flatten",
    "permute",
    "transpose",
    "unsqueeze",
    "squeeze",
    "to",
    "cuda",
    "cpu",
    "float",
    "half",
    "numel",
    "dim",
    "expand",
    "is_contiguous",
    "data_ptr",
    "stride",
    "chunk",
    "split",
    "narrow",
    "cat",
    "stack",
    "Tensor",
    "no_grad",
}


def finding(code: str, severity: str, message: str, line: int | None) -> Finding:
    return {"code": code, "severity": severity, "message": message, "line": line}


def kernel_use(tree: ast.Module, model_new: ast.ClassDef, reference_source: str | None) -> list[Finding]:
    """Findings on kernel use: nothing compiled, no forward, a forward that never calls the extension
    (hacks), and the reference's torch ops it still calls (a note)."""
    builds = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and builder_name(n.func)]
    if not builds:
        return [
            finding(
                "no_custom_kernel", "hack", "no load_inline/load call: no custom kernel is compiled", None
            )
        ]
    ext_names, ext_attrs = _extension_bindings(tree)
    methods = {n.name: n for n in model_new.body if isinstance(n, ast.FunctionDef)}
    funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    forward = methods.get("forward")
    if forward is None:
        return [finding("no_forward", "hack", "ModelNew defines no forward", model_new.lineno)]
    reached = _reachable(forward, methods, funcs)
    called = False
    torch_ops: set[str] = set()
    for fn in reached:
        local_ext = {
            t.id
            for n in ast.walk(fn)
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call) and builder_name(n.value.func)
            for t in n.targets
            if isinstance(t, ast.Name)
        }
        for node in ast.walk(fn):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            root = root_name(func)
            if root in ext_names | local_ext:
                called = True
            elif (
                isinstance(func, ast.Attribute) and _is_self_attr(func.value) and func.value.attr in ext_attrs
            ):
                called = True
            elif _is_self_attr(func) and func.attr in ext_attrs:
                called = True
            elif root in ("torch", "F") and isinstance(func, ast.Attribute) and func.attr not in _PLUMBING:
                torch_ops.add(ast.unparse(func))
    out: list[Finding] = []
    if not called:
        out.append(
            finding("kernel_not_called", "hack", "forward never calls the compiled extension", forward.lineno)
        )
    ref_ops = _reference_ops(reference_source)
    reused = sorted(op for op in torch_ops if op.split(".")[-1] in ref_ops)
    if reused:
        out.append(
            finding(
                "reference_ops",
                "note",
                f"forward calls the reference's torch ops: {', '.join(reused)}",
                forward.lineno,
            )
        )
    return out


def _extension_bindings(tree: ast.Module) -> tuple[set[str], set[str]]:
    """Module names and self attributes bound to a compiled extension (or a function of one)."""
    names: set[str] = set()
    attrs: set[str] = set()
    module_level = {id(n) for n in _module_level_nodes(tree)}
    for _ in range(3):  # propagate through a few rebinding steps
        for node in ast.walk(tree):
            if not isinstance(node, ast.Assign):
                continue
            value = node.value
            is_ext = (
                (isinstance(value, ast.Call) and builder_name(value.func))
                or root_name(value) in names
                or (
                    isinstance(value, ast.Attribute)
                    and _is_self_attr(value.value)
                    and value.value.attr in attrs
                )
                or (_is_self_attr(value) and value.attr in attrs)
            )
            if not is_ext:
                continue
            for t in node.targets:
                if isinstance(t, ast.Name) and id(node) in module_level:
                    names.add(t.id)
                elif _is_self_attr(t):
                    attrs.add(t.attr)
    return names, attrs


def _module_level_nodes(tree: ast.Module) -> list[ast.AST]:
    """Every node outside function and class bodies."""
    out: list[ast.AST] = []
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop()
        out.append(node)
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            todo.extend(ast.iter_child_nodes(node))
    return out


def _reachable(
    forward: ast.FunctionDef, methods: dict[str, ast.FunctionDef], funcs: dict[str, ast.FunctionDef]
) -> list[ast.FunctionDef]:
    seen: dict[str, ast.FunctionDef] = {"forward": forward}
    todo = [forward]
    while todo:
        fn = todo.pop()
        for node in ast.walk(fn):
            if not isinstance(node, ast.Call):
                continue
            target = None
            if _is_self_attr(node.func) and node.func.attr in methods:
                target = methods[node.func.attr]
            elif isinstance(node.func, ast.Name) and node.func.id in funcs:
                target = funcs[node.func.id]
            if target is not None and target.name not in seen:
                seen[target.name] = target
                todo.append(target)
    return list(seen.values())


def _reference_ops(reference_source: str | None) -> set[str]:
    if not reference_source:
        return set()
    try:
        tree = ast.parse(reference_source)
    except SyntaxError:
        return set()
    return {
        n.attr
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute) and root_name(n) in ("torch", "F", "nn") and n.attr not in _PLUMBING
    }


def builder_name(func: ast.expr) -> bool:
    if isinstance(func, ast.Name):
        return func.id in _BUILDERS
    if isinstance(func, ast.Attribute):
        return func.attr in ("load_inline", "load_region_kernel") or (
            func.attr == "load" and "cpp_extension" in ast.unparse(func)
        )
    return False


def root_name(node: ast.AST) -> str | None:
    while isinstance(node, ast.Attribute | ast.Call | ast.Subscript):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _is_self_attr(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"
