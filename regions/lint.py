"""Lint what the model writes inside the framework's kernel skeleton, before anything is compiled or run.

NVRTC already rejects most of these, but with messages a 1.5B model does not act on ("identifier "torch"
is undefined"); a lint finding says what to write instead. The rules are one table (code, pattern,
message), matched line by line on the body with comments removed, so the step comments the contract
renders (`// t3 = torch.add(x, bias)`) never count. printf is allowed: device printf exists and is harmless.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class LintFinding:
    """One rule broken; `line` is 1-based in the linted text, None for whole-source findings."""

    code: str
    message: str
    line: int | None


# torch.nn modules whose names are all capitals, so the CamelCase pattern alone would miss them.
_CAPS_MODULES = "GELU|SELU|CELU|ELU|GLU"

RULES: tuple[tuple[str, re.Pattern[str], str], ...] = tuple(
    (code, re.compile(pattern), message)
    for code, pattern, message in (
        (
            "torch_api",
            r"\b(?:torch|at|c10)::|\btorch\.\w",
            "torch/ATen is host-side Python/C++; device code uses the raw pointers, plain float math and the "
            "prelude's kg_* helpers",
        ),
        (
            "python",
            r"^\s*(?:import\s+\w|from\s+\w[\w.]*\s+import\b|def\s+\w+\s*\()|\bself\.|\.item\s*\(|"
            r"\bprint\s*\(",
            "Python in CUDA device code: write C++ statements (float v = ...; out[i] = v;)",
        ),
        (
            "module_call",
            rf"\b(?:{_CAPS_MODULES}|[A-Z]\w*[a-z]\w*)\s*\(",
            "a PyTorch module called as a function: compute its math inline or with a kg_* helper "
            "(e.g. kg_leaky_relu(v, 0.1f), not LeakyReLU(...))",
        ),
        (
            "host_call",
            r"\b(?:malloc|calloc|realloc|free|cuda[A-Z]\w*)\s*\(|\bstd::(?:vector|cout|string)\b|<<<",
            "host-only code in a kernel: no allocation, CUDA runtime calls or launches; write to the given "
            "output pointer",
        ),
        (
            "kernel_definition",
            r"__(?:global|device|host)__|\bextern\s*\"C\"|^\s*void\s+\w+\s*\(",
            "the framework owns the kernel and its signature: write only the statements of the body",
        ),
        (
            "include",
            r"^\s*#\s*include\b",
            "no #include: the framework prepends the prelude with everything the body needs",
        ),
        (
            "return_value",
            r"\breturn\s+[^\s;]",
            "the kernel returns void: store the result with out[...] = value; a bare `return;` ends a thread",
        ),
    )
)

_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_LINE_COMMENT = re.compile(r"//[^\n]*")


def _strip_comments(text: str) -> str:
    """Comments blanked out, keeping every newline so line numbers still match the model's text."""
    text = _BLOCK_COMMENT.sub(lambda m: "\n" * m.group().count("\n"), text)
    return _LINE_COMMENT.sub("", text)


def lint_body(body: str) -> list[LintFinding]:
    """Every rule of RULES broken by the body, in line order, at most one finding per rule and line."""
    findings = []
    for number, line in enumerate(_strip_comments(body).splitlines(), start=1):
        findings += [
            LintFinding(code, message, number) for code, pattern, message in RULES if pattern.search(line)
        ]
    return findings


def _signature_text(line: str) -> str:
    return line.strip().removesuffix("{").rstrip()


def lint_source(source: str, expected_signature: str) -> list[LintFinding]:
    """The assembled kernel must still carry the framework's signature verbatim (samples at T = 0.7
    dropped `extern "C"` in 18 of 62 compiled replies); surrounding spaces and an opening `{` do not count."""
    want = [_signature_text(s) for s in expected_signature.strip().splitlines()]
    have = [_signature_text(s) for s in source.splitlines()]
    if any(have[i : i + len(want)] == want for i in range(len(have) - len(want) + 1)):
        return []
    return [
        LintFinding(
            "signature_changed", f"the kernel signature must stay exactly: {expected_signature.strip()}", None
        )
    ]
