"""AST checks on a candidate before anything runs: refusals (never run) and reward-hack flags.

Severity: `reject` stops the evaluation (sandbox escape: process, file system, network, introspection,
tampering with torch); `hack` lets it run, so the KernelBench-compatible verdict can still be reported,
but fails the strict verdict; `note` is recorded only.
"""

from __future__ import annotations

import ast
from typing import Any

Finding = dict[str, Any]

_REJECT_MODULES = {
    "subprocess",
    "socket",
    "shutil",
    "ctypes",
    "multiprocessing",
    "requests",
    "urllib",
    "http",
    "ftplib",
    "smtplib",
    "telnetlib",
    "pty",
    "signal",
    "pickle",
    "marshal",
    "importlib",
    "builtins",
    "sys",
    "gc",
    "inspect",
    "pathlib",
    "tempfile",
    "glob",
    "io",
    "mmap",
    "resource",
    "fcntl",
    "posix",
    "webbrowser",
    "asyncio",
    "cffi",
    "code",
    "codeop",
    "runpy",
    "zipimport",
    "sysconfig",
    "site",
    "atexit",
    "traceback",
}
_HACK_MODULES = {"threading", "concurrent", "_thread"}
_REJECT_BUILTINS = {
    "open",
    "exec",
    "eval",
    "compile",
    "__import__",
    "breakpoint",
    "input",
    "globals",
    "vars",
    "getattr",
    "setattr",
    "delattr",
    "memoryview",
}
_OS_ALLOWED = {"environ", "path", "getenv", "cpu_count"}
_DUNDER_REJECT = {
    "__globals__",
    "__builtins__",
    "__subclasses__",
    "__code__",
    "__closure__",
    "__dict__",
    "__getattribute__",
    "__import__",
    "__loader__",
    "__spec__",
    "__bases__",
    "__mro__",
    "__class__",
    "__reduce__",
    "__reduce_ex__",
    "__self__",
    "__func__",
    "__frame__",
    "f_globals",
    "f_locals",
    "f_back",
    "gi_frame",
    "tb_frame",
}
_FILE_ATTRS = {"load", "save", "fromfile", "tofile", "memmap", "loadtxt", "savetxt", "savez", "from_file"}
_STREAM_ATTRS = {
    "Stream",
    "stream",
    "ExternalStream",
    "set_stream",
    "current_stream",
    "CUDAGraph",
    "graph",
    "Event",
}
_STATE_CALLS = {
    "manual_seed",
    "manual_seed_all",
    "seed",
    "set_default_dtype",
    "set_default_device",
    "use_deterministic_algorithms",
    "set_rng_state",
    "set_grad_enabled",
    "set_float32_matmul_precision",
}
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


def check_candidate(source: str, reference_source: str | None = None) -> list[Finding]:
    """Return the findings for a candidate program; the reference lets torch-op reuse be named."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return [_f("syntax_error", "reject", f"candidate is not valid Python: {exc.msg}", exc.lineno)]
    findings: list[Finding] = []
    findings += _check_sandbox(tree)
    model_new = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ModelNew"), None)
    if model_new is None:
        findings.append(_f("no_model_new", "reject", "no top-level class ModelNew", None))
        return findings
    findings += _check_hacks(tree, model_new)
    findings += _check_kernel_use(tree, model_new, reference_source)
    return findings


def rejected(findings: list[Finding]) -> bool:
    return any(f["severity"] == "reject" for f in findings)


def hacks(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f["severity"] == "hack"]


def _f(code: str, severity: str, message: str, line: int | None) -> Finding:
    return {"code": code, "severity": severity, "message": message, "line": line}


_LAUNCHER = ("evaluator.regions.launch", "load_region_kernel")  # what an exported region program imports


def _region_launcher(node: ast.Import | ast.ImportFrom) -> bool:
    """`from evaluator.regions.launch import load_region_kernel`, the one part of the evaluator a candidate
    may import: anything else (the harness's comparison, the timer) would let it judge itself."""
    return (
        isinstance(node, ast.ImportFrom)
        and node.level == 0
        and node.module == _LAUNCHER[0]
        and all(a.name == _LAUNCHER[1] for a in node.names)
    )


def _check_sandbox(tree: ast.Module) -> list[Finding]:
    out: list[Finding] = []
    os_names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for mod in mods:
                top = mod.split(".")[0]
                if top in _REJECT_MODULES:
                    out.append(
                        _f(
                            "forbidden_import",
                            "reject",
                            f"imports {mod}: process, file, network or introspection access",
                            node.lineno,
                        )
                    )
                elif top == "evaluator" and not _region_launcher(node):
                    out.append(
                        _f(
                            "judge_import",
                            "reject",
                            f"imports {mod}: the evaluator's own code (a region program may import only "
                            f"{_LAUNCHER[0]}'s {_LAUNCHER[1]})",
                            node.lineno,
                        )
                    )
                elif top in _HACK_MODULES:
                    out.append(
                        _f("threads", "hack", f"imports {mod}: work on threads escapes timing", node.lineno)
                    )
                elif top == "os":
                    if isinstance(node, ast.ImportFrom):
                        bad = [a.name for a in node.names if a.name not in _OS_ALLOWED]
                        if bad:
                            out.append(_f("forbidden_import", "reject", f"imports os.{bad[0]}", node.lineno))
                    else:
                        os_names.update(a.asname or a.name for a in node.names)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in _REJECT_BUILTINS
        ):
            out.append(_f("forbidden_call", "reject", f"calls {node.func.id}()", node.lineno))
        elif (
            isinstance(node, ast.Attribute)
            and node.attr in _FILE_ATTRS
            and _root_name(node) in ("torch", "np", "numpy")
            and "cpp_extension" not in ast.unparse(node)
        ):
            out.append(_f("file_access", "reject", f"uses {ast.unparse(node)}: file access", node.lineno))
        elif isinstance(node, ast.Attribute) and node.attr in _DUNDER_REJECT:
            out.append(_f("introspection", "reject", f"touches .{node.attr}", node.lineno))
        elif isinstance(node, ast.Name) and node.id in ("__builtins__", "__import__", "__loader__"):
            out.append(_f("introspection", "reject", f"touches {node.id}", node.lineno))
        elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                root = _root_name(t)
                if isinstance(t, ast.Attribute) and root in ("torch", "F", "nn", "np"):
                    out.append(_f("tampering", "reject", f"assigns to {ast.unparse(t)}", node.lineno))
        elif (
            isinstance(node, ast.Call)
            and _builder_name(node.func)
            and any(kw.arg == "build_directory" for kw in node.keywords)
        ):
            out.append(
                _f("build_directory", "note", "build_directory is overridden by the build cache", node.lineno)
            )
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in os_names:
            if node.attr not in _OS_ALLOWED:
                out.append(_f("forbidden_call", "reject", f"uses os.{node.attr}", node.lineno))
    return out


def _check_hacks(tree: ast.Module, model_new: ast.ClassDef) -> list[Finding]:
    out: list[Finding] = []
    for base in model_new.bases:
        text = ast.unparse(base)
        if text == "Model" or text.endswith(".Model"):
            out.append(
                _f("inherits_model", "hack", "ModelNew inherits the reference Model", model_new.lineno)
            )
    for node in ast.walk(tree):
        if isinstance(node, ast.Try):
            out.append(
                _f(
                    "try_except_fallback",
                    "hack",
                    "try/except around candidate code can fall back to torch",
                    node.lineno,
                )
            )
        elif (
            isinstance(node, ast.Attribute)
            and node.attr in _STREAM_ATTRS
            and "cuda" in ast.unparse(node.value)
        ):
            out.append(
                _f("side_stream", "hack", f"uses {ast.unparse(node)}: work off the timed stream", node.lineno)
            )
        elif isinstance(node, ast.Attribute) and node.attr in _STATE_CALLS and _root_name(node) == "torch":
            out.append(
                _f("global_state", "hack", f"changes global torch state ({ast.unparse(node)})", node.lineno)
            )
        elif isinstance(node, ast.Attribute) and node.attr == "backends" and _root_name(node) == "torch":
            out.append(_f("global_state", "hack", "touches torch.backends", node.lineno))
        elif isinstance(node, ast.Attribute) and node.attr == "data_ptr" and _inside(node, model_new):
            out.append(
                _f(
                    "data_ptr_cache",
                    "hack",
                    "Python code reads data_ptr: outputs keyed by address",
                    node.lineno,
                )
            )
    return _dedupe(out)


def _check_kernel_use(
    tree: ast.Module, model_new: ast.ClassDef, reference_source: str | None
) -> list[Finding]:
    builds = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and _builder_name(n.func)]
    if not builds:
        return [
            _f("no_custom_kernel", "hack", "no load_inline/load call: no custom kernel is compiled", None)
        ]
    ext_names, ext_attrs = _extension_bindings(tree)
    methods = {n.name: n for n in model_new.body if isinstance(n, ast.FunctionDef)}
    funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    forward = methods.get("forward")
    if forward is None:
        return [_f("no_forward", "hack", "ModelNew defines no forward", model_new.lineno)]
    reached = _reachable(forward, methods, funcs)
    called = False
    torch_ops: set[str] = set()
    for fn in reached:
        local_ext = {
            t.id
            for n in ast.walk(fn)
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call) and _builder_name(n.value.func)
            for t in n.targets
            if isinstance(t, ast.Name)
        }
        for node in ast.walk(fn):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            root = _root_name(func)
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
            _f("kernel_not_called", "hack", "forward never calls the compiled extension", forward.lineno)
        )
    ref_ops = _reference_ops(reference_source)
    reused = sorted(op for op in torch_ops if op.split(".")[-1] in ref_ops)
    if reused:
        out.append(
            _f(
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
                (isinstance(value, ast.Call) and _builder_name(value.func))
                or _root_name(value) in names
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
        if isinstance(n, ast.Attribute) and _root_name(n) in ("torch", "F", "nn") and n.attr not in _PLUMBING
    }


def _builder_name(func: ast.expr) -> bool:
    if isinstance(func, ast.Name):
        return func.id in _BUILDERS
    if isinstance(func, ast.Attribute):
        return func.attr in ("load_inline", "load_region_kernel") or (
            func.attr == "load" and "cpp_extension" in ast.unparse(func)
        )
    return False


def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, ast.Attribute | ast.Call | ast.Subscript):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _is_self_attr(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"


def _inside(node: ast.AST, container: ast.AST) -> bool:
    return any(n is node for n in ast.walk(container))


def _dedupe(findings: list[Finding]) -> list[Finding]:
    seen: set[tuple[str, int | None]] = set()
    out = []
    for f in findings:
        key = (f["code"], f["line"])
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out
