"""The reduce loop kind: one thread per output row, the reduced elements read through an accessor `x(k)`.

The body is a loop over k; what an op's meaning requires beyond it is the skeleton's. A reduction to one
value (sum, mean, max, var, ...) folds into `result`, which starts at the neutral value, and the framework
finishes it (a mean divided by R, a variance by R - correction with the row mean computed first). An
index reduction keeps `best` and `index`. A softmax gets its row max and denominator, a layer norm its
mean and 1/std, and the framework loops over the row: the body writes out(k) for one k. A scan writes
out(k) in order from the `carry` the skeleton declares at its start value. The reduced dims may be any
set (a batch norm's statistics reduce dims 0, 2 and 3): regions.rows says where a row starts and where its
k-th element lies.
"""

from __future__ import annotations

from dataclasses import dataclass

from regions.epilogue import Epilogue, split
from regions.library import PRELUDE
from regions.model import Region, RegionError, Step
from regions.rows import rows_of
from regions.skeleton import (
    BODY_MARK,
    SET_RESULT,
    Contract,
    facts_text,
    launch_info,
    loop_head,
    role_lines,
    signature_line,
    step_code,
)

REDUCE_OPS = {
    "torch.sum",
    "torch.mean",
    "torch.amax",
    "torch.max",
    "torch.amin",
    "torch.min",
    "torch.prod",
    "torch.var",
    "torch.std",
    "torch.logsumexp",
    "torch.softmax",
    "torch.log_softmax",
    "torch.nn.functional.layer_norm",
    "torch.cumsum",
    "torch.cumprod",
    "torch.argmax",
    "torch.argmin",
}
# Index reductions: the skeleton keeps the best value and its index (int64 out); the body compares and keeps.
INDEX_OPS = {"torch.argmax": ("-INFINITY", ">", "largest"), "torch.argmin": ("INFINITY", "<", "smallest")}
# Scans (one thread per row too, out(k) written in order): the carry and its start are the skeleton's. The
# carry is a float, as PyTorch's: its scan along a strided dim is this same loop, one float carried in
# order. A double carry is closer to the exact sum and so further from the float reference: a 6000-term
# strided cumsum landed 1e-4 off at a value of -6e-4, past KernelBench's atol, where the float carry was
# strictly correct (H100, 2026-12-06).
SCAN = {"torch.cumsum": ("0.0f", "sum"), "torch.cumprod": ("1.0f", "product")}
_ROWWISE = {"torch.softmax", "torch.log_softmax", "torch.nn.functional.layer_norm", *SCAN}  # write out(k)
# Ops whose meaning subtracts the row's largest value before exp (exp of an input past ~88 overflows): the
# skeleton computes it, so a body cannot leave it out (measured: a softmax body that used its max before
# defining it came back three rounds running). A softmax's denominator is the skeleton's too (measured on
# the family tasks, CPU emulation: with row_max alone, 0 of 3 softmax bodies summed and divided right).
_SHIFTED = {"torch.softmax", "torch.log_softmax", "torch.logsumexp"}
NORMALIZED = {"torch.softmax", "torch.log_softmax"}
# A layer norm's statistics are the skeleton's as well; its body is the one line per element.
STANDARDIZED = {"torch.nn.functional.layer_norm"}
EACH = NORMALIZED | STANDARDIZED  # ops whose loop over the row is the framework's
# The skeleton's row mean, then the squared deviations over R - correction.
SPREAD = {"torch.var", "torch.std"}
LONG_SUM = 4096  # a plain float sum over more terms than this misses atol = rtol = 1e-4 (probe: K = 524288)


@dataclass(frozen=True)
class Fold:
    """A reduction to one value whose combine rule is the skeleton's: `result` starts at `start`, the body
    folds each term in by `rule`, the framework stores `store` (the body never divides or roots). Measured
    with the embedded 1.5B on the family tasks (CPU emulation): asked to set `result` itself, it wrote 5 of
    20 reductions right: a mean without its division, `kg_mean(x, 2, 3)`, a variance folded into its own
    running mean."""

    start: str
    rule: str  # said to the model, {x} the accessor
    store: str  # the C expression the tail stores, from `result`
    wide: bool = False  # a sum: accumulated in double over long rows (and always for a variance)


_SQUARES = "result += d * d with d = {x}(k) - row_mean"
FOLDS: dict[str, Fold] = {
    "torch.sum": Fold("0.0f", "result += {x}(k)", "(float)result", True),
    "torch.mean": Fold("0.0f", "result += {x}(k)", "(float)(result / R)", True),
    "torch.amax": Fold("-INFINITY", "result = fmaxf(result, {x}(k))", "result"),
    "torch.max": Fold("-INFINITY", "result = fmaxf(result, {x}(k))", "result"),
    "torch.amin": Fold("INFINITY", "result = fminf(result, {x}(k))", "result"),
    "torch.min": Fold("INFINITY", "result = fminf(result, {x}(k))", "result"),
    "torch.prod": Fold("1.0f", "result *= {x}(k)", "result"),
    "torch.var": Fold("0.0f", _SQUARES, "(float)(result / spread_divisor)", True),
    "torch.std": Fold("0.0f", _SQUARES, "sqrtf((float)(result / spread_divisor))", True),
}


def reduce_contract(region: Region, names: dict[str, str]) -> Contract:
    """The contract of a reduction region (its op in REDUCE_OPS), alone or, for a fold to one value per
    row, with its fused epilogue (regions.epilogue: the framework then folds the row itself and the body
    writes the steps, reading `reduced` where the fold is finished, a mean's division)."""
    step = region.steps[0]
    fold = FOLDS.get(step.target)
    whole = Epilogue(region)
    fused = len(region.steps) > 1
    if fused:
        if fold is None:
            raise RegionError(f"{region.id}: a {step.target} has no fold of the framework's to fuse after")
        region, names, whole = split(region, names, "result" if fold.store == "result" else "reduced")
    x, *params = region.inputs
    layout = rows_of(step, x.shape)
    length = layout.length
    kernel = f"region_{region.id}"
    xn = names[x.name]
    index = INDEX_OPS.get(step.target)
    sig = signature_line(
        kernel,
        [names[t.name] for t in whole.region.inputs],
        "out",
        [names[s] for s, _ in whole.region.scalars],
        ["n"],
        "int64_t" if index else "float",
    )
    at = layout.at("k")
    accessors = [f"        auto {xn} = [&](int64_t k) -> float {{ return p_{xn}[base + {at}]; }};"]
    for t in params:  # layer_norm's weight and bias: one value per normalized element
        accessors.append(
            f"        auto {names[t.name]} = [&](int64_t k) -> float {{ return p_{names[t.name]}[k]; }};"
        )
    rowwise = step.target in _ROWWISE
    if rowwise:
        accessors.append(f"        auto out = [&](int64_t k) -> float& {{ return p_out[base + {at}]; }};")
    accessors += _statistics(region, step, xn, length)
    wide = bool(fold and fold.wide and (length > LONG_SUM or step.target in SPREAD))
    head = (
        f"{PRELUDE}\n{sig} {{\n    const int64_t R = {length};  // the reduced length: k in [0, R)\n"
        f"{loop_head('n')}        const int64_t base = {layout.base};\n"
        + "\n".join(accessors)
        + f"\n        // {step_code(step, names)}\n"
        + (
            f"        // R = {length} terms: accumulate in double (or in blocks of 256 partial sums)\n"
            if length > LONG_SUM and not fold
            else ""
        )
        + (
            _folded(fold, wide, xn)
            if fused and fold
            else _result_line(rowwise, index, fold, wide, xn, step.target in EACH)
        )
        + f"{whole.loads}{whole.todo}{BODY_MARK}"
    )
    stored = whole.last if fused else _stored(index, fold)
    store = "" if rowwise else f"        p_out[i] = {stored};\n"
    tail = ("        }\n" if step.target in EACH else "") + store + "    }\n}\n"
    what = "out(k) for k in [0, R)" if rowwise else ("`best` and `index`" if index else "`result`")
    if fused and fold:  # the framework folds: what is left is the steps
        what = f"the framework folds it into `result` ({fold.rule.format(x=xn)})" + (
            f" and `reduced` is the finished value, {fold.store}" if fold.store != "result" else ""
        )
    else:
        what = f"compute {what}"
    notes = {x.name: f" read as {xn}(k), k in [0, R) along the reduced dims", **whole.notes}
    roles = role_lines(whole.region, names, notes)
    roles.insert(
        0,
        f"- each thread handles one row: {layout.rows} rows of R = {length} elements; {what}" + whole.then,
    )
    told = "" if fused else _told(step.target, xn, index, fold)
    if told:
        roles.insert(1, told)
    launch = launch_info(whole.region, kernel, layout.rows)
    if index:
        launch["output_dtype"] = "int64"
    contract = Contract(region.id, "reduce", kernel, sig, head, tail, "", launch)
    contract.facts = facts_text(whole.region, names, head, roles)
    contract.value = whole.value
    contract.reads = whole.reads  # fused: the epilogue's operands alone (the fold is the framework's)
    if fused:
        return contract
    contract.hints = {
        "k": "the counter of the loop your body writes over the row: `for (int64_t k = 0; k < R; ++k)` "
        "around the lines that use it (one thread does the whole row, so k is never a thread index)"
    }
    if step.target not in EACH:
        contract.loop = "for (int64_t k = 0; k < R; ++k)"
    return contract


def fold_code(fold: Fold, xn: str, loop: str = "for (int64_t k = 0; k < R; ++k)") -> str:
    """The loop that folds a row (or, by `loop`, a thread's share of it) into `result` by the fold's rule
    (C, one statement)."""
    if "row_mean" in fold.rule:
        return f"{loop} {{\n    const float d = {xn}(k) - row_mean;\n    result += d * d;\n}}"
    return f"{loop} {fold.rule.format(x=xn)};"


def _folded(fold: Fold, wide: bool, xn: str) -> str:
    """A fused reduction's fold, the framework's: `result` declared, the loop, and the finished value
    `reduced` where the fold's store is more than `result` (a mean's division)."""
    kind, start = ("double", fold.start.removesuffix("f")) if wide else ("float", fold.start)
    code = "\n".join(f"        {line}" for line in fold_code(fold, xn).splitlines())
    finished = (
        f"        const float reduced = {fold.store};  // the finished value\n"
        if fold.store != "result"
        else ""
    )
    return f"        {kind} result = {start};\n{code}\n{finished}"


def _statistics(region: Region, step: Step, xn: str, length: int) -> list[str]:
    """The lines the skeleton computes before the body, from what the op means: a scan's carry, a
    softmax's row max and denominator, a layer norm's mean and 1/std, a variance's divisor and row mean."""
    lines: list[str] = []
    if step.target in SCAN:
        start, what = SCAN[step.target]
        lines.append(
            f"        float carry = {start};  // the running {what}: fold {xn}(k) in, then out(k) = carry"
        )
    if step.target in _SHIFTED:
        lines += [
            f"        float row_max = -INFINITY;  // the row's largest {xn}(k): subtract it before exp",
            f"        for (int64_t k = 0; k < R; ++k) row_max = fmaxf(row_max, {xn}(k));",
        ]
    if step.target in NORMALIZED:
        lines += [
            "        double kg_exps = 0.0;",
            f"        for (int64_t k = 0; k < R; ++k) kg_exps += expf({xn}(k) - row_max);",
            f"        const float row_sum = (float)kg_exps;  // the sum of expf({xn}(k) - row_max)",
        ]
    if step.target in STANDARDIZED:
        eps = float(dict(step.kwargs).get("eps", 1e-5))
        lines += [
            *_row_mean(xn, "the row's mean"),
            "        double kg_squares = 0.0;",
            f"        for (int64_t k = 0; k < R; ++k) {{\n            const double d = {xn}(k) - row_mean;\n"
            "            kg_squares += d * d;\n        }",
            f"        const float row_rstd = rsqrtf((float)(kg_squares / R) + {eps!r}f);  // 1/sqrt(var+eps)",
        ]
    if step.target in SPREAD:
        divisor = length - correction(step)
        if divisor <= 0:
            raise RegionError(
                f"{region.id}: a variance of {length} elements with this correction is undefined"
            )
        lines += [
            f"        const double spread_divisor = {divisor}.0;  // R - correction: the framework divides",
            *_row_mean(xn, "the row's mean, computed for you"),
        ]
    return lines


def _row_mean(xn: str, note: str) -> list[str]:
    return [
        f"        double kg_sum = 0.0;\n        for (int64_t k = 0; k < R; ++k) kg_sum += {xn}(k);",
        f"        const float row_mean = (float)(kg_sum / R);  // {note}",
    ]


def _told(target: str, xn: str, index: tuple[str, str, str] | None, fold: Fold | None) -> str:
    """The role line that says what the skeleton did for the body and what is left to it."""
    if target in NORMALIZED:
        return (
            "- row_max and row_sum: the row's largest value and the sum of expf(x(k) - row_max), computed "
            "for you, and the loop over k is the framework's: write the one line `out(k) = ...;` for this k"
        )
    if target in STANDARDIZED:
        return (
            "- row_mean and row_rstd (1 / sqrt(variance + eps)): the row's statistics, computed for you, and "
            "the loop over k is the framework's: write the one line `out(k) = ...;` for this k"
        )
    if target in _SHIFTED:
        return (
            "- row_max: the row's largest value, computed for you: it is the m of the op's meaning, so two "
            "passes over k remain (the sum of exps, then the result)"
        )
    if index:
        start, better, which = index
        return (
            f"- index: the k of the {which} {xn}(k), the first one on ties: best starts at {start}; for "
            f"each k in order, when {xn}(k) {better} best, set best = {xn}(k) and index = k"
        )
    if fold:
        return (
            f"- fold: one loop over k in [0, R) doing {fold.rule.format(x=xn)}; result starts at "
            f"{fold.start} and the framework stores {fold.store}"
            + ("; row_mean is the row's mean, computed for you" if target in SPREAD else "")
        )
    return ""


def _result_line(
    rowwise: bool, index: tuple[str, str, str] | None, fold: Fold | None, wide: bool, xn: str, each: bool
) -> str:
    if each:  # a softmax: the framework loops over the row, the body writes this k's element
        return "        for (int64_t k = 0; k < R; ++k) {  // the framework's loop: write out(k) for this k\n"
    if rowwise:
        return "        // write out(k) for every k in [0, R)\n"
    if index:
        return (
            f"        float best = {index[0]};  // the {index[2]} value so far\n"
            "        int64_t index = 0;  // where it is: the framework stores it\n"
        )
    if fold:
        kind, start = ("double", fold.start.removesuffix("f")) if wide else ("float", fold.start)
        return (
            f"        {kind} result = {start};  // for each k: {fold.rule.format(x=xn)}; "
            f"the framework stores {fold.store}\n"
        )
    return f"{SET_RESULT}\n"


def _stored(index: tuple[str, str, str] | None, fold: Fold | None) -> str:
    """What the tail stores: the index, the fold's finished value, or the body's result."""
    return "index" if index else fold.store if fold else "result"


def correction(step: Step) -> int:
    """torch.var's correction: 1 unless `correction=` or `unbiased=False` says otherwise."""
    kwargs = dict(step.kwargs)
    if kwargs.get("correction") is not None:
        return int(kwargs["correction"])
    return 0 if kwargs.get("unbiased") is False else 1
