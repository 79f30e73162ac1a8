"""Local checks of a region kernel before any GPU sees it: the body is extracted and cleaned, assembled
into the framework's skeleton, linted, and compiled with NVRTC (tens of ms, no GPU needed)."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any

from evaluator.regions.nvrtc import annotate, compile_kernel
from regions.contract import Contract
from regions.library import HELPERS
from regions.lint import lint_body, lint_source
from regions.skeleton import ADD_TERMS, SET_RESULT

_TORCH_HELPER = re.compile(r"\btorch\.(?:nn\.functional\.)?(\w+)\(")  # torch.tanh( -> kg_tanh(
# std::expf( -> expf(, std::max( -> kg_max(: device code has the C names, and no <cmath> or <algorithm>
# (libstdc++ has no std::expf either); the 1.5B model writes them in one reply in thirty.
_STD_MATH = re.compile(r"\bstd::(\w+)\(")
_C_MATH = frozenset(
    "expf logf sqrtf rsqrtf tanhf fabsf fmaxf fminf powf erff log1pf expm1f sinf cosf floorf ceilf roundf "
    "exp2f log2f".split()
)
_STEP_ASSIGN = re.compile(r"^(\s*)(t\d+)\s*=[^=]")
_STEP_DECL = re.compile(r"\b(?:float|auto|double)\s+(t\d+)\b")
# a step's whole line that ends without its `;`
_STEP_LINE = re.compile(r"^\s*(?:(?:const\s+)?(?:float|auto|double)\s+)?t\d+\s*=[^=][^;{}]*[\w)\]]\s*$")
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_UNDEFINED = re.compile(r'identifier "(\w+)" is undefined')
_DECLARED = re.compile(
    r"\b(?:float|double|int|int64_t|long|bool|unsigned|auto)\b\s*\*?\s*(?:__restrict__\s+)?(\w+)\s*(?=[=;,\[)])"
)
_REDECLARED = re.compile(r"(?m)^(\s*)((?:const\s+)?(?:float|double|int64_t|int|auto)\s+)(\w+)(?=\s*=[^=])")
_LOOP_VARIABLE = re.compile(r"\bfor\s*\(\s*(?:const\s+)?(?:int64_t|int|long|unsigned|auto)\s+(\w+)")
_LAMBDA_PARAMS = re.compile(r"\[&\]\(([^)]*)\)")  # an accessor's parameters exist inside it only
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
_STORE = re.compile(r"\s*p_out\s*\[[^\]]*\]\s*=[^=]")  # the model's copy of the tail's store, in its words
# a helper or C function called with PyTorch's keywords, `kg_leaky_relu(t1, negative_slope=0.01)`: C has
# none, so the keyword goes and the value stays (the 1.5B wrote it on a fresh ask after two repairs); a
# keyword whose value is a string is a PyTorch mode, `kg_gelu(pooled(), approximate='none')`, and goes
# whole (the 1.5B copied it from the step comment three answers running). Arguments may call a function.
_HELPER_CALL = re.compile(r"\b((?:kg_\w+|[a-z]\w*f)\()((?:[^()]|\([^()]*\))*)\)")
_KEYWORD = re.compile(r"(?<=[(,])(\s*)[A-Za-z_]\w*\s*=(?!=)\s*")
_MODE = re.compile(r"""\s*,\s*[A-Za-z_]\w*\s*=\s*(['"])[^'"]*\1""")
_POINTER = re.compile(r"const float\* __restrict__ p_(\w+)")  # the kernel's inputs, in its signature
# A skeleton whose `result` starts unset (a product's sum) needs a body that sets it: measured, a fused
# conv's body wrote only its epilogue line, `t1 = result / 2.0;`, reading the uninitialised float
_SETS_RESULT = re.compile(r"\bresult\s*(?:[-+*/]?=)(?!=)")
_COUNT = re.compile(r"\bR\b")
# Measured at KernelBench's scale: the 1.5B's mean `result += v_t1(0); result += v_t1(1);` passed the
# emulation's small twin (two elements) and summed two of two million on the GPU.
_FIXED_ELEMENTS = (
    "the body never reads `R`, how many elements it folds (R changes with the input's size and the launch): "
    "loop over all of them, `for (int64_t k = 0; k < R; ++k) ...`; elements named by number (x(0), x(1)) "
    "are folded alone"
)
_RESULT_UNSET = "`result` is never set: compute the op's value into it (`result = ...;`), then the steps"
# A product's `result` holds its sum so far (regions.skeleton.ADD_TERMS), 0 on the first contract and the
# earlier slices' sum on a staged shape: a body adds to it and never sets it
_RESULT_ASSIGNED = re.compile(r"(?<![\w.])result\s*=(?!=)([^;]*)")  # its right side: group 1
_RESULT_ZEROED = re.compile(r"(?m)^[ \t]*result\s*=\s*0(?:\.0*)?[fF]?\s*;[ \t]*\n?")
_RESULT_ADDED = re.compile(r"\bresult\s*[-+]=")
_READS_RESULT = re.compile(r"\bresult\b")
_SETS_SUM = (
    "`result` already holds this output's sum so far (0 at the start; on a staged shape the earlier slices' "
    "sum): add each term to it (`result += ...;`); setting it drops what it holds"
)
_ADDS_NOTHING = "the body never adds to `result`: add each term of the sum to it (`result += ...;`)"
_DECLARES_K = re.compile(r"\b(?:int64_t|int|long|unsigned|auto|size_t)\s+k\b")  # a loop's or its own k


@dataclass
class Checked:
    """The verdict of the local checks on one body: ok, or the findings a repair round shows."""

    body: str
    source: str
    ok: bool
    lint: list[dict[str, Any]] = field(default_factory=list)
    compile_log: str = ""
    errors: str = ""  # what a repair prompt shows: lint messages, or compiler errors with their lines
    compile_seconds: float = 0.0


def extract_body(text: str, contract: Contract) -> str:
    """The lines the model meant as the body: the last fenced block (or the whole answer), without the
    lines it repeated from the framework's head and tail (the 1.5B model often copies given lines, and a
    repeated declaration would not compile), a declaration of a name the skeleton declares read as an
    assignment (`float result = 0.0f;` where the skeleton holds `double result`), with `torch.tanh(` read
    as the prelude's `kg_tanh(` where that helper exists (the step comments show PyTorch names),
    `std::expf(` as `expf(`, a helper's PyTorch keyword dropped (`kg_elu(x, alpha=1.0)`: C has none;
    a mode, `approximate='none'`, goes whole),
    and a missing `float` on a step added. Where the tail stores the output, the
    body's own store and what follows it are the tail in the model's words (`p_out[0] = ...; }`): cut."""
    blocks = _FENCE.findall(text or "")
    code = blocks[-1][1] if blocks else (text or "")
    given = {
        line.strip()
        for line in (contract.head + "\n" + contract.tail).splitlines()
        if re.search(r"\w", line)  # a bare brace repeated is not a copy of the skeleton
    }
    lines = [line for line in code.splitlines() if line.strip() not in given]
    if "p_out[" in contract.tail:  # the framework stores the output: a store of the body's own is the tail
        lines = lines[: next((k for k, line in enumerate(lines) if _STORE.match(line)), len(lines))]
        lines += ["}"] * max(0, _open_braces(lines))  # a store inside the body's own loop: close the loop
    while lines and (not lines[-1].strip() or (lines[-1].strip() in ("}", "};") and _open_braces(lines) < 0)):
        lines.pop()  # the framework closes the loop and the kernel: only braces the body never opened
    while lines and not lines[0].strip():
        lines.pop(0)
    body = "\n".join(line.rstrip() for line in lines)
    body = _assigned(body, _skeleton_names(contract))
    if _adds_terms(contract):
        body = _added(body)
    body = _TORCH_HELPER.sub(lambda m: _helper(m) or m.group(0), body)
    body = _STD_MATH.sub(lambda m: f"{m[1]}(" if m[1] in _C_MATH else _helper(m) or m[0], body)
    body = _HELPER_CALL.sub(lambda m: m[1] + _KEYWORD.sub(r"\1", _MODE.sub("", m[2])) + ")", body)
    return _looped(_declare_steps(body), contract.loop)


def _looped(body: str, loop: str) -> str:
    """A body that reads the reduced counter k with no loop of its own, where the skeleton leaves the loop
    to the body, inside that loop: `result += x(k);` alone means it for each k (measured: the 1.5B wrote
    that line three repairs running, told each time that k was undefined)."""
    code = _COMMENT.sub("", body)
    if not loop or not re.search(r"\bk\b", code) or _DECLARES_K.search(code):
        return body
    inner = "\n".join(f"    {line}" if line.strip() else line for line in body.splitlines())
    return f"{loop} {{\n{inner}\n}}"


def _adds_terms(contract: Contract) -> bool:
    """A product whose skeleton holds its sum so far in `result` for the body to add to."""
    return contract.kind == "contraction" and ADD_TERMS in contract.head


def _added(body: str) -> str:
    """On a product's skeleton: a line that zeroes `result` goes (the sum already starts where it should),
    and a body that sets `result` once and never reads it (the 1.5B's `float acc = 0.0f; ... result = acc;`)
    adds that value instead. On the first contract, where result starts at 0, both mean the same sum; on a
    staged shape, where it holds the earlier slices' sum, only the addition is right."""
    body = _RESULT_ZEROED.sub("", body)
    sets = _sets_result(body)
    if len(sets) == 1 and len(_READS_RESULT.findall(body)) == 1:
        body = body[: sets[0].start()] + "result +=" + body[sets[0].start(1) :]
    return body


def _sets_result(code: str) -> list[re.Match[str]]:
    """The assignments to `result` that do not read it (`result = fmaf(a, b, result);` adds to it)."""
    return [m for m in _RESULT_ASSIGNED.finditer(code) if not _READS_RESULT.search(m[1])]


def _skeleton_names(contract: Contract) -> set[str]:
    """What the skeleton declares for the body to set (result, best, index, carry, ...): the framework's
    lines after the signature, loop counters and accessor parameters aside."""
    at = contract.head.find(contract.signature)
    own = _COMMENT.sub("", contract.head[at + len(contract.signature) :] if at >= 0 else "")
    return set(_unscoped(own)) - {"n", "i"}


def _assigned(body: str, names: set[str]) -> str:
    """`float result = 0.0f;` -> `result = 0.0f;` for a name the skeleton already declares."""

    def strip(match: re.Match[str]) -> str:
        return f"{match[1]}{match[3]}" if match[3] in names else match[0]

    return _REDECLARED.sub(strip, body)


def _helper(match: re.Match[str]) -> str | None:
    """`kg_NAME(` where the prelude defines that helper."""
    name = f"kg_{match.group(1)}"
    return f"{name}(" if name in HELPERS else None


def _declare_steps(body: str) -> str:
    """`t2 = ...` for a step the body never declared gets its `float`: the step names are the
    framework's, and the model drops the type now and then (the only error in a chain it got right). A
    step's line that ends without its `;` gets it (`t1 = pooled() + bias`, three answers running, written
    as the PyTorch line reads)."""
    declared: set[str] = set()
    out = []
    for line in body.splitlines():
        match = _STEP_ASSIGN.match(line)
        if match and match.group(2) not in declared:
            line = f"{match.group(1)}float {line[len(match.group(1)) :]}"
        if _STEP_LINE.match(line) and line.count("(") == line.count(")"):
            line = line.rstrip() + ";"
        declared.update(_STEP_DECL.findall(line))
        out.append(line)
    return "\n".join(out)


def _error_lines(log: str) -> str:
    """Errors the annotator cannot place on a line (e.g. 'At end of source: ...'), without the warnings."""
    return "\n".join(line for line in log.splitlines() if "error" in line) or log.strip()[-1500:]


def _open_braces(lines: list[str]) -> int:
    text = "\n".join(lines)
    return text.count("{") - text.count("}")


def check(contract: Contract, body: str, arch: str = "sm_90") -> Checked:
    """Lint the body, then compile the assembled kernel; the first problem found is what a repair sees,
    and an error about a name is answered with what exists (`name_hints`)."""
    source = contract.assemble(body)
    findings = [*lint_body(body), *lint_source(source, contract.signature)]
    lint = [{"code": f.code, "message": f.message, "line": f.line} for f in findings]
    if not body.strip():
        lint.append({"code": "empty_body", "message": "the answer held no lines of code", "line": None})
    else:
        lint += _unused(contract, _COMMENT.sub("", body))
    if lint:
        errors = "\n".join(f"- {f['message']}" for f in lint)
        return Checked(body, source, False, lint, errors=errors)
    compiled = compile_kernel(source, name=f"{contract.kernel_name}.cu", arch=arch)
    if compiled.ok and _COUNT.search(contract.loop) and not _COUNT.search(_COMMENT.sub("", body)):
        # after the compiler, whose word on a stray name is the more useful one
        fixed = [{"code": "fixed_elements", "message": _FIXED_ELEMENTS, "line": None}]
        return Checked(body, source, False, fixed, compiled.log, f"- {_FIXED_ELEMENTS}", compiled.seconds)
    errors = "" if compiled.ok else (annotate(source, compiled) or _error_lines(compiled.log))
    hints = "" if compiled.ok else name_hints(compiled.log, contract, body)
    errors = f"{errors}\n\n{hints}" if hints else errors
    return Checked(body, source, compiled.ok, [], compiled.log, errors, compiled.seconds)


def _unused(contract: Contract, code: str) -> list[dict[str, Any]]:
    """What a body that compiles can still leave out: an input it never reads (every input takes part in
    the value), a `result` the skeleton leaves unset and the body never sets. Measured on fused windows and
    reductions: the 1.5B wrote only the epilogue's line, `float t1 = tanhf(reduced());`, and no fold."""
    found = []
    for name in _POINTER.findall(contract.signature) if contract.reads is None else contract.reads:
        if not re.search(rf"\b(?:p_)?{re.escape(name)}\b", code):
            found.append(
                f"the body never reads `{name}`: every input takes part in the value; read it "
                "as the kernel so far declares it"
            )
    if SET_RESULT in contract.head and not _SETS_RESULT.search(code):
        found.append(_RESULT_UNSET)
    if _adds_terms(contract):
        code = _COMMENT.sub("", code)
        if _sets_result(code):
            found.append(_SETS_SUM)
        elif not _RESULT_ADDED.search(code) and not _RESULT_ASSIGNED.search(code):
            found.append(_ADDS_NOTHING)
    return [{"code": "unused", "message": m, "line": None} for m in found]


def name_hints(log: str, contract: Contract, body: str) -> str:
    """For each name the compiler did not know, what exists instead: whether the body declares it only
    after its use (a softmax's max used before the line that computes it); the `kg_*` helpers nearest a
    helper that does not exist; else the names the kernel declares. A small model told only "undefined"
    repeats the name (measured: the same body three rounds running)."""
    lines = []
    for name in dict.fromkeys(_UNDEFINED.findall(log)):
        order = _declared_after_use(body, name)
        near = _nearest_helpers(name)
        if order is not None:
            lines.append(
                f"- `{name}` is used on body line {order[0]} but declared only on body line {order[1]}: "
                "compute it before the line that needs it."
            )
        elif name in contract.hints:
            lines.append(f"- `{name}` is {contract.hints[name]}.")
        elif name.startswith("kg_") or near:
            listed = ", ".join(near or HELPERS)
            lines.append(
                f"- `{name}` is not a helper here; {'the nearest' if near else 'the helpers'}: {listed}."
            )
        else:
            known = ", ".join(declared_names(contract, body))
            lines.append(f"- `{name}` is not declared anywhere; the names this kernel declares: {known}.")
    return "What exists:\n" + "\n".join(lines) if lines else ""


def _nearest_helpers(name: str) -> list[str]:
    """Helpers named like `name` (`kg_sigmod`, `sigmoidf`, `tanh`); none for a short local name."""
    if name.startswith("kg_"):
        return difflib.get_close_matches(name, HELPERS, 3, 0.5)
    if len(name) < 3:
        return []
    stem = name[:-1] if name.endswith("f") and len(name) > 3 else name
    return difflib.get_close_matches(f"kg_{stem}", HELPERS, 3, 0.8)


def declared_names(contract: Contract, body: str) -> list[str]:
    """The names the kernel's own code declares (its parameters, the framework's lines, the body's), in
    order: what a body may use besides the helpers (the framework's own kg_* scratch names are not
    offered)."""
    at = contract.head.find(contract.signature)
    own = contract.head[at:] if at >= 0 else ""
    code = _COMMENT.sub("", own + "\n" + body)
    names = (n for n in _unscoped(code) if n not in ("n", "i"))
    return list(dict.fromkeys(n for n in names if not n.startswith("kg_")))


def _unscoped(code: str) -> list[str]:
    """The names `code` declares, in order, but a loop's counter and an accessor's parameters (they exist
    inside their loop or lambda only)."""
    scoped = set(_LOOP_VARIABLE.findall(code))
    params = (p for group in _LAMBDA_PARAMS.findall(code) for p in group.split(",") if p.strip())
    scoped |= {p.split()[-1] for p in params}
    return [n for n in _DECLARED.findall(code) if n not in scoped]


def _declared_after_use(body: str, name: str) -> tuple[int, int] | None:
    """(first line using `name`, the line declaring it), 1-based, when the declaration comes later."""
    lines = _COMMENT.sub("", body).splitlines()
    declares = re.compile(rf"\b(?:float|double|int|int64_t|long|bool|unsigned|auto)\b\s*\*?\s*{name}\b")
    uses = re.compile(rf"(?<![\w.]){name}(?!\w)")
    declared = next((k for k, line in enumerate(lines, 1) if declares.search(line)), None)
    used = next((k for k, line in enumerate(lines, 1) if uses.search(line) and not declares.search(line)), 0)
    if declared is None or not used or used > declared:
        return None
    return used, declared


def same_code(a: str, b: str) -> bool:
    """The same body, comments and whitespace aside: a repair that changed nothing else changed nothing."""
    return "".join(_COMMENT.sub("", a).split()) == "".join(_COMMENT.sub("", b).split())
