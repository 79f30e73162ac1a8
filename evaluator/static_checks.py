"""AST checks on a candidate before anything runs: refusals (never run) and reward-hack flags.

Severity: `reject` stops the evaluation (sandbox escape: process, file system, network, introspection,
tampering with torch); `hack` lets it run, so the KernelBench-compatible verdict can still be reported,
but fails the strict verdict; `note` is recorded only.
"""

from __future__ import annotations

import ast

from evaluator.kernel_use import Finding, builder_name, finding, kernel_use, root_name

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


def check_candidate(source: str, reference_source: str | None = None) -> list[Finding]:
    """Return the findings for a candidate program; the reference lets torch-op reuse be named."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return [finding("syntax_error", "reject", f"candidate is not valid Python: {exc.msg}", exc.lineno)]
    findings: list[Finding] = []
    findings += _check_sandbox(tree)
    model_new = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ModelNew"), None)
    if model_new is None:
        findings.append(finding("no_model_new", "reject", "no top-level class ModelNew", None))
        return findings
    findings += _check_hacks(tree, model_new)
    findings += kernel_use(tree, model_new, reference_source)
    return findings


def rejected(findings: list[Finding]) -> bool:
    return any(f["severity"] == "reject" for f in findings)


def hacks(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f["severity"] == "hack"]


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
                        finding(
                            "forbidden_import",
                            "reject",
                            f"imports {mod}: process, file, network or introspection access",
                            node.lineno,
                        )
                    )
                elif top == "evaluator" and not _region_launcher(node):
                    out.append(
                        finding(
                            "judge_import",
                            "reject",
                            f"imports {mod}: the evaluator's own code (a region program may import only "
                            f"{_LAUNCHER[0]}'s {_LAUNCHER[1]})",
                            node.lineno,
                        )
                    )
                elif top in _HACK_MODULES:
                    out.append(
                        finding(
                            "threads", "hack", f"imports {mod}: work on threads escapes timing", node.lineno
                        )
                    )
                elif top == "os":
                    if isinstance(node, ast.ImportFrom):
                        bad = [a.name for a in node.names if a.name not in _OS_ALLOWED]
                        if bad:
                            out.append(
                                finding("forbidden_import", "reject", f"imports os.{bad[0]}", node.lineno)
                            )
                    else:
                        os_names.update(a.asname or a.name for a in node.names)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in _REJECT_BUILTINS
        ):
            out.append(finding("forbidden_call", "reject", f"calls {node.func.id}()", node.lineno))
        elif (
            isinstance(node, ast.Attribute)
            and node.attr in _FILE_ATTRS
            and root_name(node) in ("torch", "np", "numpy")
            and "cpp_extension" not in ast.unparse(node)
        ):
            out.append(
                finding("file_access", "reject", f"uses {ast.unparse(node)}: file access", node.lineno)
            )
        elif isinstance(node, ast.Attribute) and node.attr in _DUNDER_REJECT:
            out.append(finding("introspection", "reject", f"touches .{node.attr}", node.lineno))
        elif isinstance(node, ast.Name) and node.id in ("__builtins__", "__import__", "__loader__"):
            out.append(finding("introspection", "reject", f"touches {node.id}", node.lineno))
        elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                root = root_name(t)
                if isinstance(t, ast.Attribute) and root in ("torch", "F", "nn", "np"):
                    out.append(finding("tampering", "reject", f"assigns to {ast.unparse(t)}", node.lineno))
        elif (
            isinstance(node, ast.Call)
            and builder_name(node.func)
            and any(kw.arg == "build_directory" for kw in node.keywords)
        ):
            out.append(
                finding(
                    "build_directory", "note", "build_directory is overridden by the build cache", node.lineno
                )
            )
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in os_names:
            if node.attr not in _OS_ALLOWED:
                out.append(finding("forbidden_call", "reject", f"uses os.{node.attr}", node.lineno))
    return out


def _check_hacks(tree: ast.Module, model_new: ast.ClassDef) -> list[Finding]:
    out: list[Finding] = []
    for base in model_new.bases:
        text = ast.unparse(base)
        if text == "Model" or text.endswith(".Model"):
            out.append(
                finding("inherits_model", "hack", "ModelNew inherits the reference Model", model_new.lineno)
            )
    for node in ast.walk(tree):
        if isinstance(node, ast.Try):
            out.append(
                finding(
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
                finding(
                    "side_stream", "hack", f"uses {ast.unparse(node)}: work off the timed stream", node.lineno
                )
            )
        elif isinstance(node, ast.Attribute) and node.attr in _STATE_CALLS and root_name(node) == "torch":
            out.append(
                finding(
                    "global_state", "hack", f"changes global torch state ({ast.unparse(node)})", node.lineno
                )
            )
        elif isinstance(node, ast.Attribute) and node.attr == "backends" and root_name(node) == "torch":
            out.append(finding("global_state", "hack", "touches torch.backends", node.lineno))
        elif isinstance(node, ast.Attribute) and node.attr == "data_ptr" and _inside(node, model_new):
            out.append(
                finding(
                    "data_ptr_cache",
                    "hack",
                    "Python code reads data_ptr: outputs keyed by address",
                    node.lineno,
                )
            )
    return _dedupe(out)


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
