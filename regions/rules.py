"""The no-model writer: every body the framework can write by rule from a region's steps and its contract.

Most correct bodies the model writes are one line per step calling a `kg_*` helper, which a rule writes as
well; this is the baseline that says what the model adds on top of the framework (issue: fast second). It
writes the plain skeleton of each kind (its first contract, no launch shape): a map's line per step, a
reduction's fold or its one line per element, a window's loops, a product's or a convolution's sum. A
region it has no rule for gets None: its empty body fails the local checks, so the candidate leaves that
region to PyTorch like any failed body (nodes.region_parts.failed_regions).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from regions.contract import Contract
from regions.epilogue import step_names
from regions.model import Region, Step
from regions.reduce import FOLDS, INDEX_OPS, fold_code
from regions.skeleton import c_names
from regions.window import window_fold

Args = list[str]
_F = "torch.nn.functional."


def rule_body(region: Region, contract: Contract) -> str | None:
    """The body of `contract` written by rule, or None where no rule covers the region."""
    names = c_names(region)
    if region.kind == "map":
        return _lines(region.steps, names)
    step, *epilogue = region.steps
    ins = [names[t.name] for t in region.inputs]
    core: str | None = None
    if epilogue:
        core = ""  # a fused core's sum or fold is the skeleton's (regions.epilogue)
    elif region.kind == "reduce":
        core = _reduce(step.target, ins)
    elif region.kind == "window":
        core = _window(step.target, ins[0], contract.facts)
    elif region.kind == "contraction":
        core = _contraction(step.target, ins, contract.facts)
    if core is None or not epilogue:
        return core
    # a fused epilogue (aggressive): its steps read the core's value and are numbered from t1 after it
    lines = _lines(epilogue, step_names(region, names, contract.value))
    return None if lines is None else "\n".join(part for part in (core, lines) if part)


def _lines(steps: list[Step], names: dict[str, str]) -> str | None:
    """One line per pointwise step, or None where one has no rule."""
    lines = [_map_line(k, step, names) for k, step in enumerate(steps, 1)]
    return None if None in lines else "\n".join(lines)  # type: ignore[arg-type]


# ---------------------------------------------------------------- map


def _map_line(k: int, step: Step, names: dict[str, str]) -> str | None:
    rule = _POINTWISE.get(step.target)
    if rule is None:
        return None
    args = [_value(a, names) for a in step.args]
    kwargs = {key: _value(v, names) for key, v in step.kwargs}
    expr = rule(args, kwargs)
    return None if expr is None else f"float t{k} = {expr};"


def _value(v: Any, names: dict[str, str]) -> str:
    """A step's argument in C: a tensor's (or scalar's) C name, a float literal, or the text as is."""
    if isinstance(v, str) and v in names:
        return names[v]
    try:
        number = float(v)
    except (TypeError, ValueError):
        return str(v)
    if number != number:
        return "NAN"
    if number in (float("inf"), float("-inf")):
        return "INFINITY" if number > 0 else "-INFINITY"
    return f"{number!r}f"


def _opt(a: Args, kw: dict[str, str], i: int, key: str, default: str | None) -> str | None:
    got = kw.get(key, a[i] if len(a) > i else default)
    return None if got in (None, "None") else got


def _scaled(op: str) -> Callable[[Args, dict[str, str]], str]:
    def rule(a: Args, kw: dict[str, str]) -> str:
        alpha = _opt(a, kw, 2, "alpha", None)
        return f"{a[0]} {op} {a[1] if alpha is None else f'{alpha} * {a[1]}'}"

    return rule


def _div(a: Args, kw: dict[str, str]) -> str:
    mode = (_opt(a, kw, 2, "rounding_mode", None) or "").strip("'\"")
    return {"floor": f"floorf({a[0]} / {a[1]})", "trunc": f"truncf({a[0]} / {a[1]})"}.get(
        mode, f"{a[0]} / {a[1]}"
    )


def _pow(a: Args, kw: dict[str, str]) -> str:
    exponent = kw.get("exponent", a[1])
    return f"{a[0]} * {a[0]}" if exponent == "2.0f" else f"powf({a[0]}, {exponent})"


def _clamp(lo_key: str, hi_key: str, lo_default: str | None, hi_default: str | None) -> Callable:
    def rule(a: Args, kw: dict[str, str]) -> str:
        lo, hi = _opt(a, kw, 1, lo_key, lo_default), _opt(a, kw, 2, hi_key, hi_default)
        if lo is not None and hi is not None:
            return f"kg_clamp({a[0]}, {lo}, {hi})"
        if lo is not None:
            return f"fmaxf({a[0]}, {lo})"
        return f"fminf({a[0]}, {hi})" if hi is not None else a[0]

    return rule


def _softplus(a: Args, kw: dict[str, str]) -> str:
    beta, threshold = _opt(a, kw, 1, "beta", "1.0f"), _opt(a, kw, 2, "threshold", "20.0f")
    if (beta, threshold) == ("1.0f", "20.0f"):
        return f"kg_softplus({a[0]})"
    return f"({a[0]} * {beta} > {threshold} ? {a[0]} : log1pf(expf({a[0]} * {beta})) / {beta})"


def _unary(template: str) -> Callable[[Args, dict[str, str]], str]:
    return lambda a, kw: template.format(a=a[0])


# torch.<op> is <op>f in CUDA's math library
_LIBM = "exp exp2 expm1 log log2 log10 log1p sqrt rsqrt sin cos tan asin acos atan sinh cosh tanh asinh "
_LIBM += "acosh atanh erf erfc floor ceil trunc"
_POINTWISE: dict[str, Callable[[Args, dict[str, str]], str | None]] = {
    "torch.add": _scaled("+"),
    "torch.sub": _scaled("-"),
    "torch.mul": lambda a, kw: f"{a[0]} * {a[1]}",
    "torch.div": _div,
    "torch.pow": _pow,
    "torch.minimum": lambda a, kw: f"fminf({a[0]}, {a[1]})",
    "torch.maximum": lambda a, kw: f"fmaxf({a[0]}, {a[1]})",
    "torch.clamp": _clamp("min", "max", None, None),
    "torch.clamp_min": _clamp("min", "max", None, None),
    "torch.clamp_max": lambda a, kw: f"fminf({a[0]}, {_opt(a, kw, 1, 'max', 'INFINITY')})",
    f"{_F}hardtanh": _clamp("min_val", "max_val", "-1.0f", "1.0f"),
    f"{_F}relu6": _unary("kg_clamp({a}, 0.0f, 6.0f)"),
    f"{_F}leaky_relu": lambda a, kw: f"kg_leaky_relu({a[0]}, {_opt(a, kw, 1, 'negative_slope', '0.01f')})",
    f"{_F}elu": lambda a, kw: f"kg_elu({a[0]}, {_opt(a, kw, 1, 'alpha', '1.0f')})",
    f"{_F}celu": lambda a, kw: (
        f"({a[0]} > 0.0f ? {a[0]} : {(al := _opt(a, kw, 1, 'alpha', '1.0f'))} * expm1f({a[0]} / {al}))"
    ),
    f"{_F}gelu": lambda a, kw: (
        f"kg_gelu_tanh({a[0]})" if "tanh" in str(kw.get("approximate", "")) else f"kg_gelu({a[0]})"
    ),
    f"{_F}softplus": _softplus,
    f"{_F}threshold": lambda a, kw: (
        f"({a[0]} > {_opt(a, kw, 1, 'threshold', None)} ? {a[0]} : {_opt(a, kw, 2, 'value', None)})"
    ),
    f"{_F}logsigmoid": _unary("(fminf({a}, 0.0f) - log1pf(expf(-fabsf({a}))))"),
    f"{_F}softsign": _unary("({a} / (1.0f + fabsf({a})))"),
    f"{_F}tanhshrink": _unary("({a} - tanhf({a}))"),
    "torch.neg": _unary("-{a}"),
    "torch.positive": _unary("{a}"),
    "torch.reciprocal": _unary("1.0f / {a}"),
    "torch.square": _unary("{a} * {a}"),
    "torch.sign": _unary("(float)(({a} > 0.0f) - ({a} < 0.0f))"),
    "torch.round": _unary("rintf({a})"),
    "torch.abs": _unary("fabsf({a})"),
    **{f"torch.{op}": _unary(f"{op}f({{a}})") for op in _LIBM.split()},
    **{f"{ns}{op}": _unary(f"kg_{op}({{a}})") for op in ("relu", "sigmoid", "selu") for ns in ("torch.", _F)},
    **{f"{_F}{op}": _unary(f"kg_{op}({{a}})") for op in ("silu", "mish", "hardswish", "hardsigmoid")},
}


# ---------------------------------------------------------------- reduce, window, contraction


def _reduce(target: str, ins: list[str]) -> str | None:
    x = ins[0]
    loop = "for (int64_t k = 0; k < R; ++k)"
    if target in FOLDS:
        return fold_code(FOLDS[target], x)
    if target in INDEX_OPS:
        better = INDEX_OPS[target][1]
        return f"{loop}\n    if ({x}(k) {better} best) {{ best = {x}(k); index = k; }}"
    if target in ("torch.cumsum", "torch.cumprod"):
        op = "+" if target == "torch.cumsum" else "*"
        return f"{loop} {{ carry {op}= {x}(k); out(k) = carry; }}"
    if target == "torch.softmax":
        return f"out(k) = expf({x}(k) - row_max) / row_sum;"
    if target == "torch.log_softmax":
        return f"out(k) = {x}(k) - row_max - logf(row_sum);"
    if target == "torch.logsumexp":
        return f"float s = 0.0f;\n{loop} s += expf({x}(k) - row_max);\nresult = row_max + logf(s);"
    if target == f"{_F}layer_norm":
        affine = "".join(f" * {w}(k)" for w in ins[1:2]) + "".join(f" + {b}(k)" for b in ins[2:3])
        return f"out(k) = ({x}(k) - row_mean) * row_rstd{affine};"
    return None


_LOOPS = re.compile(r"for \(int64_t (\w+) = 0; \1 < (\w+); \+\+\1\)")


def _window(target: str, x: str, facts: str) -> str | None:
    """Max or average pooling: the loops the contract names, folding each x(...) into result."""
    said = next((line for line in facts.splitlines() if "loops over the window are yours" in line), "")
    loops = _LOOPS.findall(said)
    if not loops:
        return None
    at = f"{x}({', '.join(c for c, _ in loops)})"
    return _nest(loops, window_fold("max_pool" in target, at))


def _nest(loops: list[tuple[str, str]], inner: str) -> str:
    lines = [f"{'    ' * d}for (int64_t {c} = 0; {c} < {n}; ++{c})" for d, (c, n) in enumerate(loops)]
    return "\n".join([*lines, "    " * len(loops) + inner])


def _contraction(target: str, ins: list[str], facts: str) -> str | None:
    """A product's or a convolution's sum over its accessors, plus a convolution's bias (a product's is the
    framework's, added after the sum)."""
    if target in ("torch.matmul", "torch.mm", "torch.bmm", f"{_F}linear"):
        return f"for (int64_t k = 0; k < K; ++k) result += {ins[0]}(k) * {ins[1]}(k);"
    if not target.startswith(f"{_F}conv"):
        return None
    taps = sorted(set(re.findall(r"\bk(\d) in \[0, K\1\)", facts)))
    loops = [("c", "C"), *((f"k{d}", f"K{d}") for d in taps)]
    at = ", ".join(c for c, _ in loops)
    bias = f"{ins[2]}[o]" if len(ins) > 2 else "0.0f"
    return f"float acc = {bias};\n{_nest(loops, f'acc += {ins[0]}({at}) * {ins[1]}({at});')}\nresult = acc;"
