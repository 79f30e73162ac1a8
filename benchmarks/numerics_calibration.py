"""Calibration of the strict numerics rule (evaluator.numerics) on this CPU host.

Two studies, both through the oracle's own code (numerics.Deriver, numerics.tolerance_for):

- `synthetic`: float32 GEMMs of K terms on [0, 1), [-1, 1) and x100 inputs, each output summed as GPU
  kernels do (one accumulator per output with fused multiply-add: cuBLAS's main loop and a tiled kernel;
  split into 4 or 32 slices: split-K; without FMA; pairwise: a tree reduction; MKL's blocked GEMM) against
  the same products with TF32 or float16/bfloat16 operands or a float16 result; and GELU/softmax with the
  tanh GELU, a float16 intermediate and an __expf-like exp. Each row: the worst legitimate pair's error as
  a fraction of the tolerance (must stay < 1) and the closest approximation's (must stay > 1).
- `problems`: each KernelBench problem (../shared/kernelbench, levels 1-3, problems 1-10) at a reduced
  batch (full reduction lengths), its reference's float32-vs-float64 error and tolerance on a standard,
  the signed and the extreme trial's inputs; against them the largest error of every H200 candidate that
  the strict verdict accepts now (benchmarks/results/**, evidence.trials and strict.signed_trial).

    python -m benchmarks.numerics_calibration [--study synthetic|problems|both] [--out FILE.json]

The last run's numbers: benchmarks/results/numerics_calibration.json.

Reference errors here are MKL's and oneDNN's, not cuBLAS's or cuDNN's: the problems' table reads the
candidates' GPU errors against CPU-derived tolerances at reduced sizes (both make them tighter than the
GPU's own: fewer elements, blocked CPU sums).
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from evaluator import harness, numerics
from evaluator.config import EvalConfig
from evaluator.problem import Problem, load_problem, shrink_problem

REPO = Path(__file__).resolve().parent.parent
KERNELBENCH = REPO.parent / "shared" / "kernelbench"
RESULTS = REPO / "benchmarks" / "results"
EPS32 = torch.finfo(torch.float32).eps

# ---------------------------------------------------------------- synthetic GEMMs


def seq_fma(a: torch.Tensor, b: torch.Tensor, slices: int = 1) -> torch.Tensor:
    """One float32 accumulator per output, acc = fma(a, b, acc) over each slice of K, slices added."""
    k = a.shape[1]
    a64, b64 = a.double(), b.double()
    bounds = [k * i // slices for i in range(slices + 1)]
    total = torch.zeros(a.shape[0], b.shape[1])
    for lo, hi in zip(bounds, bounds[1:], strict=False):
        acc = torch.zeros(a.shape[0], b.shape[1])
        for j in range(lo, hi):
            acc = (acc.double() + a64[:, j : j + 1] * b64[j : j + 1, :]).float()
        total = total + acc
    return total


def seq_plain(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """The same without FMA: each product rounded, then added."""
    acc = torch.zeros(a.shape[0], b.shape[1])
    for j in range(a.shape[1]):
        acc = acc + a[:, j : j + 1] * b[j : j + 1, :]
    return acc


def pairwise(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Products rounded to float32, then summed as a tree (K a power of two)."""
    x = a.unsqueeze(1) * b.t().unsqueeze(0)  # M x N x K products
    while x.shape[-1] > 1:
        x = x[..., 0::2] + x[..., 1::2]
    return x[..., 0]


def tf32(x: torch.Tensor) -> torch.Tensor:
    """Round to TF32's 10-bit mantissa (to nearest)."""
    bits = x.contiguous().view(torch.int32)
    return ((bits + 0x1000) & ~0x1FFF).view(torch.float32)


def gemm_row(k: int, mode: str, config: EvalConfig, mn: int) -> dict[str, Any]:
    torch.manual_seed(k)
    a, b = torch.rand(mn, k), torch.rand(k, mn)
    if mode != "unsigned":
        a, b = a * 2 - 1, b * 2 - 1
    if mode == "extreme":
        a, b = a * 100, b * 100
    exact = a.double() @ b.double()
    refs = {"seq_fma": seq_fma(a, b), "split4": seq_fma(a, b, 4), "split32": seq_fma(a, b, 32), "mkl": a @ b}
    legit = {**refs, "seq_no_fma": seq_plain(a, b)}
    if k & (k - 1) == 0 and mn * mn * k <= 1 << 26:
        legit["pairwise"] = pairwise(a, b)
    approx = {
        "tf32_operands": seq_fma(tf32(a), tf32(b)),
        "fp16_operands": seq_fma(a.half().float(), b.half().float()),
        "bf16_operands": seq_fma(a.bfloat16().float(), b.bfloat16().float()),
        "fp16_result": refs["seq_fma"].half().float(),
    }
    tol = {
        name: numerics.tolerance_for(_max_err(r, exact), exact.abs().max().item(), torch.float32, config)
        for name, r in refs.items()
    }
    worst = max(
        (_max_err(c, r) / tol[rn], f"{cn} vs {rn}") for rn, r in refs.items() for cn, c in legit.items()
    )
    closest = min(
        (_max_err(c, r) / tol[rn], f"{cn} vs {rn}") for rn, r in refs.items() for cn, c in approx.items()
    )
    return {
        "case": f"gemm K={k} ({mn}x{mn} outputs)",
        "inputs": mode,
        "reference_error_ulps_of_scale": {
            n: round(_max_err(r, exact) / (EPS32 * exact.abs().max().item()), 2) for n, r in refs.items()
        },
        "worst_legit": round(worst[0], 3),
        "worst_legit_pair": worst[1],
        "closest_approximation": round(closest[0], 3),
        "closest_approximation_pair": closest[1],
    }


def _max_err(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a.double() - b.double()).abs().max())


# ---------------------------------------------------------------- synthetic elementwise


def fast_exp(x: torch.Tensor) -> torch.Tensor:
    """__expf as the hardware computes it: 2^(x * log2 e) with the product rounded to float32 (the error
    that grows with |x|) and the power off by up to 2 ulps."""
    y = torch.exp2((x * 1.4426950408889634).float())
    return y * (1 + EPS32 * (2 * torch.rand_like(y) - 1) * 2)


def elementwise_rows(config: EvalConfig) -> list[dict[str, Any]]:
    rows = []
    erf_gelu = F.gelu
    cases: dict[
        str,
        tuple[
            Callable[[torch.Tensor], torch.Tensor],
            dict[str, Callable[[torch.Tensor], torch.Tensor]],
            dict[str, Callable[[torch.Tensor], torch.Tensor]],
        ],
    ] = {
        "gelu (erf)": (
            erf_gelu,
            {
                "erff formula": lambda x: 0.5 * x * (1 + torch.erf(x * 0.7071067811865476)),
                "x * Phi(x) via erfc": lambda x: x * 0.5 * torch.erfc(-x * 0.7071067811865476),
            },
            {
                "tanh approximation": lambda x: F.gelu(x, approximate="tanh"),
                "float16 intermediate": lambda x: F.gelu(x.half().float()),
                "sigmoid(1.702x) approximation": lambda x: x * torch.sigmoid(1.702 * x),
            },
        ),
        "softmax (rows of 4096)": (
            lambda x: torch.softmax(x, dim=1),
            {
                "expf, sequential sum": lambda x: _softmax(x, torch.exp, sequential=True),
                "__expf, pairwise sum": lambda x: _softmax(x, fast_exp, sequential=False),
            },
            {
                "float16 exponentials": lambda x: _softmax(x, lambda t: torch.exp(t).half().float(), False),
                "bfloat16 inputs": lambda x: torch.softmax(x.bfloat16().float(), dim=1),
            },
        ),
    }
    for name, (ref_fn, legit, approx) in cases.items():
        for mode, make in (
            ("unsigned", lambda: torch.rand(256, 4096)),
            ("signed", lambda: torch.rand(256, 4096) * 2 - 1),
            ("extreme", lambda: (torch.rand(256, 4096) * 2 - 1) * 100),
        ):
            torch.manual_seed(0)
            x = make()
            r32, r64 = ref_fn(x), ref_fn(x.double())
            scale = r64.abs().max().item()
            tol = numerics.tolerance_for(_max_err(r32, r64), scale, torch.float32, config)
            worst = max((_max_err(f(x), r32) / tol, n) for n, f in legit.items())
            closest = min((_max_err(f(x), r32) / tol, n) for n, f in approx.items())
            rows.append(
                {
                    "case": name,
                    "inputs": mode,
                    "reference_error_ulps_of_scale": round(_max_err(r32, r64) / (EPS32 * scale), 2),
                    "worst_legit": round(worst[0], 3),
                    "worst_legit_pair": worst[1],
                    "closest_approximation": round(closest[0], 3),
                    "closest_approximation_pair": closest[1],
                }
            )
    return rows


def _softmax(x: torch.Tensor, exp: Callable[[torch.Tensor], torch.Tensor], sequential: bool) -> torch.Tensor:
    e = exp(x - x.max(dim=1, keepdim=True).values)
    if sequential:
        s = torch.zeros(x.shape[0])
        for j in range(x.shape[1]):
            s = s + e[:, j]
    else:
        s = e.sum(dim=1)
    return e / s.unsqueeze(1)


# ---------------------------------------------------------------- the 30 problems

# Batch-like sizes only: reduction lengths (K, channels x kernel, normalised and pooled extents) stay.
REDUCED: dict[tuple[int, int], dict[str, int]] = {
    (1, 3): {"batch_size": 8},
    (1, 4): {"M": 16},
    (1, 5): {"M": 1024},
    (1, 7): {"M": 2048},
    (1, 8): {"M": 1024},
    (1, 9): {"M": 4096},
    (1, 10): {"N": 2},
    (2, 1): {"batch_size": 2},
    (2, 2): {"batch_size": 2},
    (2, 3): {"batch_size": 2},
    (2, 4): {"batch_size": 2},
    (2, 5): {"batch_size": 2},
    (2, 6): {"batch_size": 4},
    (2, 7): {"batch_size": 2},
    (2, 8): {"batch_size": 2},
    (2, 9): {"batch_size": 64},
    (2, 10): {"batch_size": 2},
    (3, 1): {"batch_size": 8},
    (3, 2): {"batch_size": 8},
    (3, 3): {"batch_size": 64},
    (3, 4): {"batch_size": 64},
    (3, 5): {"batch_size": 2},
    (3, 6): {"batch_size": 1},
    (3, 7): {"batch_size": 1},
    (3, 8): {"batch_size": 2},
    (3, 9): {"batch_size": 2},
    (3, 10): {"batch_size": 1},
}


# Too large for this host's 23 GB in float64 (2.1G parameters, 17 GB): narrower hidden layers.
REDUCED_TEXT: dict[tuple[int, int], tuple[str, str]] = {
    (3, 2): ("hidden_layer_sizes = [32768, 32768]", "hidden_layer_sizes = [8192, 8192]"),
}


def problem_row(
    problem: Problem, config: EvalConfig, candidates: dict[str, list[dict[str, Any]]]
) -> dict[str, Any]:
    reduced = REDUCED.get((problem.level or 0, problem.problem_id or 0), {})
    small = shrink_problem(problem, cap=1 << 40, **reduced) if reduced else problem
    text = REDUCED_TEXT.get((problem.level or 0, problem.problem_id or 0))
    if text:
        small = Problem(**{**small.to_dict(), "source": small.source.replace(*text)})
        reduced = {**reduced, "text": text[1]}
    ns: dict[str, Any] = {}
    exec(compile(small.source, problem.path or problem.name, "exec"), ns)  # noqa: S102 - a KernelBench file
    dev = torch.device("cpu")
    torch.manual_seed(config.seed)
    model = ns["Model"](*ns["get_init_inputs"]())

    def call_ref(args: list[Any]) -> Any:
        with torch.no_grad():
            return model(*args)

    def gen(seed: int) -> list[Any]:
        return harness.make_inputs(ns["get_inputs"], seed, dev)

    t0 = time.perf_counter()
    call_ref(gen(config.seed))
    per_call = time.perf_counter() - t0
    deriver = numerics.Deriver(
        config.replace(numerics_max_reference_s=1e9, numerics_budget_s=1e9), model, call_ref, dev, per_call
    )
    torch.manual_seed(config.seed)
    seeds = [int(torch.randint(0, 2**31 - 1, (1,)).item()) for _ in range(config.trials)]
    tols = numerics.derive_tolerances(config, deriver, gen, seeds)
    key = f"l{problem.level}_p{problem.problem_id}_"
    row: dict[str, Any] = {
        "problem": f"L{problem.level} P{problem.problem_id} {problem.name}",
        "reduced": reduced,
    }
    for kind, derived in (("standard", tols.standard), ("signed", tols.signed), ("extreme", tols.extreme)):
        if derived.outputs is None or derived.outputs[0] is None:
            row[kind] = {"skipped": derived.skipped}
            continue
        tol = derived.outputs[0]
        row[kind] = {"reference_error": tol.reference_error, "scale": tol.scale, "tolerance": tol.tolerance}
    accepted = candidates.get(key, [])
    row["candidates"] = len(accepted)
    for kind, field_ in (("standard", "standard_error"), ("signed", "signed_error")):
        errs = [c[field_] for c in accepted if c.get(field_) is not None]
        if errs and "tolerance" in row[kind]:
            row[kind]["candidate_error"] = max(errs)
            tol = row[kind]["tolerance"]
            row[kind]["ratio"] = max(errs) / tol if tol > 0 else (0.0 if max(errs) == 0 else math.inf)
    row["seconds"] = round(time.perf_counter() - t0, 1)
    return row


def strict_candidates(kb_correct_only: bool = False) -> dict[str, list[dict[str, Any]]]:
    """Per problem key prefix: the H200 candidates the strict verdict accepts (every results file that
    keeps evidence.trials), with their largest error on the five trials and on the signed trial."""
    found: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(RESULTS.rglob("*.json*")):
        for verdict in _verdicts(path):
            ev = verdict.get("evidence") or {}
            ok = (
                verdict.get("correct_kernelbench") if kb_correct_only else verdict.get("verdict") == "correct"
            )
            if not ok or not isinstance(ev.get("problem"), str) or not ev.get("trials"):
                continue
            prefix = "_".join(ev["problem"].split("_")[:2]) + "_"
            signed = ((ev.get("strict") or {}).get("signed_trial") or {}).get("max_abs_err")
            found.setdefault(prefix, []).append(
                {
                    "standard_error": max(t.get("max_abs_err", 0.0) for t in ev["trials"]),
                    "signed_error": signed,
                    "file": str(path.relative_to(RESULTS)),
                    "strict_failures": ev.get("strict_failures"),
                }
            )
    return found


def _verdicts(path: Path) -> list[dict[str, Any]]:
    text = path.read_text()
    if path.suffix == ".json":
        data = json.loads(text)
        inner = data.get("verdicts") if isinstance(data, dict) else None
        return [v for v in (inner or {}).values() if isinstance(v, dict)]
    out = []
    for line in text.splitlines():
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(item, dict):
            out.append(item.get("verdict") if isinstance(item.get("verdict"), dict) else item)
    return out


# ---------------------------------------------------------------- report


def _fmt(x: float | None) -> str:
    return "-" if x is None else (f"{x:.3g}" if math.isfinite(x) else str(x))


def print_problems(rows: list[dict[str, Any]]) -> None:
    print(
        "| problem (CPU size) | trial | reference error | scale | tolerance | candidates' max error | ratio |"
    )
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        for kind in ("standard", "signed", "extreme"):
            k = r[kind]
            if "skipped" in k:
                print(f"| {r['problem']} | {kind} | skipped: {k['skipped']} | | | | |")
                continue
            cells = [
                f"{r['problem']} {r['reduced'] or ''}",
                kind,
                _fmt(k["reference_error"]),
                _fmt(k["scale"]),
                _fmt(k["tolerance"]),
                f"{_fmt(k.get('candidate_error'))} ({r['candidates']})",
                _fmt(k.get("ratio")),
            ]
            print("| " + " | ".join(cells) + " |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--study", choices=("synthetic", "problems", "both"), default="both")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--only", default=None, help="problems: comma-separated LEVEL_ID, e.g. 1_6,2_3")
    args = parser.parse_args(argv)
    torch.set_num_threads(max(1, torch.get_num_threads()))
    config = EvalConfig(backend="cpu")
    report: dict[str, Any] = {"factor": config.numerics_factor, "floor_ulps": config.numerics_floor_ulps}
    if args.study in ("synthetic", "both"):
        rows = [
            gemm_row(k, m, config, 32)
            for k in (64, 1024, 4096, 8192)
            for m in ("unsigned", "signed", "extreme")
        ]
        rows += [gemm_row(131072, m, config, 4) for m in ("unsigned", "signed", "extreme")]
        rows += elementwise_rows(config)
        for r in rows:
            print(json.dumps(r), flush=True)
        report["synthetic"] = rows
    if args.study in ("problems", "both"):
        accepted = strict_candidates()
        only = set(args.only.split(",")) if args.only else None
        rows = []
        for level in (1, 2, 3):
            for path in sorted(
                (KERNELBENCH / f"level{level}").glob("*.py"), key=lambda p: int(p.name.split("_")[0])
            ):
                problem = load_problem(path)
                if only and f"{level}_{problem.problem_id}" not in only:
                    continue
                rows.append(problem_row(problem, config, accepted))
                print(json.dumps(rows[-1], default=str), flush=True)
        report["problems"] = rows
        print_problems(rows)
    if args.out:
        args.out.write_text(json.dumps(report, indent=1, default=str))


if __name__ == "__main__":
    main()
