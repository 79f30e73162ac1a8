"""What every region contract shares: the Contract itself, the C names the model reads, the facts text,
and the pieces of a skeleton (signature, grid-stride loop, launch description) the kinds assemble.

Names the model reads are C identifiers that cannot shadow a helper: step outputs become t1, t2, ...
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from regions.library import GLOSSARY, HELPERS
from regions.model import Region, Step

BODY_MARK = "        // ---- your code: from here ----"
# A `result` the body must set itself (a product's sum): regions.check refuses a body that never does
SET_RESULT = "        float result;  // set it"
# A product's `result` holds its sum so far (0, or the earlier slices' sum where the framework stages K): the
# body adds every term to it and never sets it, so one body runs on every product shape.
ADD_TERMS = "add every term"


def add_result(kind: str, what: str, start: str | None = None) -> str:
    """A product's declaration of `result`: `kind` (float or double) from `start` (its zero where none is
    given); `what` names the terms."""
    first = start or ("0.0" if kind == "double" else "0.0f")
    return f"        {kind} result = {first};  // {ADD_TERMS} {what} to it\n"


_C_KEYWORDS = {
    "auto",
    "break",
    "case",
    "char",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "float",
    "for",
    "goto",
    "if",
    "int",
    "long",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "typedef",
    "union",
    "unsigned",
    "void",
    "volatile",
    "while",
    "out",
    "result",
    "n",
    "i",
}


@dataclass
class Contract:
    """Everything about one region that is not the model's to write."""

    region_id: str
    kind: str
    kernel_name: str
    signature: str
    head: str  # prelude, signature and the code before the body (the framework prepends it)
    tail: str  # the code after the body (stores, closing braces)
    facts: str  # the region as PyTorch, op meanings, tensors, the kernel so far: what the prompt carries
    launch: dict[str, Any] = field(default_factory=dict)  # argument order and element count for a launcher
    # Names a body may use that the kernel does not declare (a window's loop counters, an average's divisor
    # that only the tail knows): name -> what an "undefined" error about it is answered with
    # (regions.check.name_hints).
    hints: dict[str, str] = field(default_factory=dict)
    # The loop the body itself writes over the reduced counter k (a fold's or an arg-reduction's), when the
    # skeleton leaves it to the body: a body that reads k without it gets it (regions.check.extract_body).
    loop: str = ""
    # The name a fused epilogue's steps read the core op's value by (regions.epilogue): `result`, or
    # `pooled` / `reduced` where the framework finishes its fold (an average's divisor).
    value: str = "result"
    # The inputs the body itself must read (regions.check refuses a body that leaves one out); None: every
    # input of the signature. A fused window's or reduction's input is read by the framework's fold.
    reads: list[str] | None = None

    def assemble(self, body: str) -> str:
        """The whole kernel source with the model's body in place (indented under the marker)."""
        lines = [
            ("        " + line.strip()) if line.strip() else "" for line in body.strip("\n").splitlines()
        ]
        return f"{self.head}\n" + "\n".join(lines) + f"\n{self.tail}"


# What the skeletons and launch shapes declare in a kernel's own scope (loop indices, extents, the result
# and the statistics they keep): an input named like one (`torch.diag(d) @ m`) is renamed, or its accessor
# would be declared twice.
SKELETON_LOCALS = frozenset(
    {"i", "j", "k", "m", "n", "o", "M", "N", "K", "R", "C", "KD", "KH", "KW", "K0", "K_ALL", "K_END", "R_ALL"}
    | {f"{v}{d}" for v in "kcopqs" for d in "012"}
    | {"D1", "D2", "D3", "D4", "base", "best", "bt", "carry", "index", "out", "plane", "pooled", "reduced"}
    | {"rest", "result", "row_max", "row_mean", "row_rstd", "row_sum", "spread_divisor", "total", "tx", "ty"}
    | {"tile_a", "tile_b"}
)


def c_names(region: Region) -> dict[str, str]:
    """fx name -> C identifier: inputs keep a sanitised name unless the kernel's scope has it already, step
    outputs become t1, t2, ..."""
    names: dict[str, str] = {}
    taken = set(HELPERS) | _C_KEYWORDS | SKELETON_LOCALS | {f"t{k}" for k in range(1, len(region.steps) + 1)}
    for t in region.inputs:
        base = re.sub(r"\W", "_", t.name).strip("_") or "in"
        base = f"v_{base}" if base[0].isdigit() or base in taken else base
        name, k = base, 1
        while name in taken:
            name, k = f"{base}_in" if k == 1 else f"{base}_in{k}", k + 1
        names[t.name] = name
        taken.add(name)
    for k, step in enumerate(region.steps, 1):
        names[step.out.name] = f"t{k}"
    for scalar, _ in region.scalars:
        names.setdefault(scalar, scalar)
    return names


def renamed(code: str, names: dict[str, str]) -> str:
    """Every name replaced in one pass (t0 -> t1 must not then become t2)."""
    if not names:
        return code
    pattern = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.sub(rf"(?<![\w.])(?:{pattern})(?!\w)", lambda m: names[m.group(0)], code)


def step_code(step: Step, names: dict[str, str]) -> str:
    return renamed(step.code or f"{step.out.name} = {step.target}({', '.join(step.args)})", names)


def facts_text(region: Region, names: dict[str, str], head: str, roles: list[str]) -> str:
    steps = "\n".join(step_code(s, names) for s in region.steps)
    meanings = "\n".join(
        f"- {t}: {GLOSSARY.get(t, 'see the PyTorch documentation for this op')}"
        for t in dict.fromkeys(s.target for s in region.steps)
    )
    tensors = "\n".join(roles)
    body_at = head.rindex(BODY_MARK)
    return (
        f"## The PyTorch code this kernel computes\n```python\n{steps}\n```\n\n"
        f"## What each op means\n{meanings}\n\n"
        f"## Tensors (float32, contiguous)\n{tensors}\n\n"
        f"## The kernel so far (the framework writes this part, and the end)\n```cuda\n"
        f"{head[head.index('extern') : body_at + len(BODY_MARK)]}\n```"
    )


def signature_line(
    name: str, pointers: list[str], out: str, scalars: list[str], counts: list[str], out_type: str = "float"
) -> str:
    params = [f"const float* __restrict__ p_{p}" for p in pointers] + [f"{out_type}* __restrict__ p_{out}"]
    params += [f"float {s}" for s in scalars] + [f"int64_t {c}" for c in counts]
    return f'extern "C" __global__ void {name}({", ".join(params)})'


def kernel_params(signature: str) -> list[str]:
    """A kernel signature's parameters, each as declared (`const float* __restrict__ p_x`, `int64_t n`)."""
    return [p.strip() for p in signature[signature.index("(") + 1 : signature.rindex(")")].split(",")]


def region_signature(name: str, region: Region, names: dict[str, str]) -> str:
    """The signature of a kernel over all of the region's inputs and scalars, writing a float `out`."""
    scalars = [names[s] for s, _ in region.scalars]
    return signature_line(name, [names[t.name] for t in region.inputs], "out", scalars, ["n"])


def loop_head(count: str) -> str:
    return (
        f"    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < {count};\n"
        f"         i += (int64_t)gridDim.x * blockDim.x) {{\n"
    )


def launch_info(region: Region, name: str, count: int) -> dict[str, Any]:
    """What a launcher needs: the kernel, tensors in signature order, scalars, and the loop's count."""
    return {
        "kernel": name,
        "inputs": [t.name for t in region.inputs],
        "output": region.output.name,
        "output_shape": list(region.output.shape),
        "scalars": [s for s, _ in region.scalars],
        "count": count,
    }


def role_lines(region: Region, names: dict[str, str], extra: dict[str, str]) -> list[str]:
    rows = [f"- {names[t.name]}: shape {list(t.shape)}{extra.get(t.name, '')}" for t in region.inputs]
    rows += [f"- {s}: a float scalar (a kernel argument)" for s, _ in region.scalars]
    rows.append(f"- out: shape {list(region.output.shape)}, written by the framework from your result")
    return rows
