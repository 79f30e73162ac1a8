"""The project's own family tasks at KernelBench's scale: the unseen problems are large (inputs of millions
of elements, reductions over thousands of terms, grids past 65,535 blocks), while the family tasks are
written small so the CPU can emulate them. A grown twin multiplies a task's module-level sizes (the names in
SIZES: batch, rows, side, length, ...) by the largest power of two that keeps every input, intermediate and
output within `--elements` values (2^24 by default), measured on the meta device, so nothing is allocated.
Layer widths (channels, features) are kept: they set the weights' size and a product's cost, which grow
with their square.

    python -m benchmarks.family_scale grow OUT_DIR [--elements N]   # OUT_DIR/levelN/ID_Name.py + factors.json
    python -m benchmarks.family_scale report                       # summary.md from the verdicts
    python -m benchmarks.family_scale reference DIR TASK ... --out F  # GPU: the reference's own float32 error

`reference` asks whether a wrong_output says anything about the kernel: it runs a task's reference in
float32 and, deep-copied, in float64 (as evaluator.numerics does) on one seed, and
reports whether the float32 reference itself passes atol = rtol = 1e-4 against float64. Where it does not,
no summation order other than PyTorch's own can be expected to pass that fixed check either.

The grown tasks run like any KernelBench directory (`run.py --kernelbench-dir OUT_DIR`); their verdicts,
and the small tasks', are kept in benchmarks/results/family_scale/ as <size>_<ambition>.verdicts.jsonl
(<size>: small or grown); `report` sets them side by side.
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import math
import sys
from pathlib import Path
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from evaluator.problem import Problem, ProblemError, load_problem, scan_problems, shrink_problem

SIZES = frozenset(
    ("batch", "rows", "cols", "side", "n", "length", "steps", "tokens", "max_tokens")
    + ("m", "k", "middle", "last", "width")
)
FACTORS = (256, 128, 64, 32, 16, 8, 4, 2)
ELEMENTS = 1 << 24
ATOL = RTOL = 1e-4  # KernelBench's fixed check, as the evaluator's config has it
RESULTS = Path(__file__).resolve().parent / "results" / "family_scale"


def sizes(problem: Problem) -> dict[str, int]:
    """The module-level integer sizes a twin grows: `NAME = <int>` for a name in SIZES."""
    found = {}
    for node in ast.parse(problem.source).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            value = node.value.value
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id in SIZES and type(value) is int:
                    found[target.id] = value
    return found


class _Largest(TorchDispatchMode):
    """Records the most values any op's output holds (an attention's scores outgrow its inputs)."""

    def __init__(self) -> None:
        super().__init__()
        self.values = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204
        out = func(*args, **(kwargs or {}))
        for t in out if isinstance(out, tuple | list) else [out]:
            if isinstance(t, torch.Tensor):
                self.values = max(self.values, t.numel())
        return out


def largest(problem: Problem) -> int:
    """The most values any input, intermediate or output of the problem holds, on the meta device
    (nothing allocated); the model's parameters are built there too."""
    scope: dict[str, Any] = {"__name__": f"kg_scale_{problem.name}"}
    with torch.device("meta"):
        exec(compile(problem.source, problem.path or problem.name, "exec"), scope)  # the project's own task
        model = scope["Model"](*scope["get_init_inputs"]())
        inputs = scope["get_inputs"]()
        with _Largest() as seen:
            model(*inputs)
    return max([seen.values] + [t.numel() for t in inputs if isinstance(t, torch.Tensor)])


def grow(problem: Problem, elements: int = ELEMENTS) -> tuple[Problem, int]:
    """The problem with its SIZES multiplied by the largest factor of FACTORS that keeps every input and
    the output within `elements` values, and that factor (1: nothing to grow, or nothing fits). Where no
    factor fits with every size grown (a layer built for one width: `nn.LayerNorm(128)` beside
    `cols = 128`), each size is tried alone and the twin with the most values kept."""
    found = sizes(problem)
    if not found:
        return problem, 1
    best: tuple[int, Problem, int] = (0, problem, 1)
    for names in [set(found)] + [{name} for name in found if len(found) > 1]:
        for factor in FACTORS:
            twin = shrink_problem(problem, cap=1 << 62, **{n: found[n] * factor for n in names})
            try:
                values = largest(twin)
            except (RuntimeError, NotImplementedError, ValueError, TypeError):
                continue  # an op with no meta kernel, or a shape the sizes break: try smaller
            if values <= elements:
                best = max(best, (values, twin, factor), key=lambda b: b[0])
                break
        if names == set(found) and best[2] > 1:
            break
    return best[1], best[2]


def write(out: Path, elements: int) -> dict[str, int]:
    """Every family task's grown twin under `out` in the same layout; the factors, by task."""
    from graph.demo_tasks.families import FAMILIES_DIR  # here: the GPU host has no langgraph for `graph`

    factors = {}
    problems, broken = scan_problems(FAMILIES_DIR)
    if broken:
        raise broken[0]
    for problem in problems:
        twin, factor = grow(problem, elements)
        path = Path(problem.path)
        target = out / path.parent.name / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(twin.source)
        factors[f"L{problem.level}/{problem.name}"] = factor
    (out / "factors.json").write_text(json.dumps(factors, indent=1, sort_keys=True) + "\n")
    return factors


def _verdicts(path: Path) -> dict[str, dict]:
    """A verdict file by task (`L<level>/<name>`), the last verdict of a task counting."""
    by_task = {}
    for line in path.read_text().splitlines():
        if line.strip():
            verdict = json.loads(line)
            by_task[verdict["job_id"].split(":", 1)[1].split("|")[0]] = verdict
    return by_task


def report(folder: Path = RESULTS) -> str:
    """summary.md: per verdict file and level, the tasks, how many are strictly correct, how many at
    least FASTER x eager, and the geomean over eager of the correct; then the tasks correct at one size
    and not at the other."""
    from benchmarks.ruled import FASTER  # here: the GPU host (which runs `reference`) has no langgraph

    files = sorted(folder.glob("*.verdicts.jsonl"))
    lines = [
        "# Family tasks, small and grown to KernelBench's scale (bodies by rule, n = 1)",
        "",
        "Written by `python -m benchmarks.family_scale report`; the grown twins come from `grow` "
        "(factors in factors.json).",
        "",
        "| verdicts | device | level | tasks | strict | at least 1.05x eager | x eager, geomean (strict) |",
        "|---|---|---|---|---|---|---|",
    ]
    tables = {f.name.removesuffix(".verdicts.jsonl"): _verdicts(f) for f in files}
    for name, verdicts in tables.items():
        device = next(iter(verdicts.values()), {}).get("evidence", {}).get("gpu", "-")
        for level in ("L1", "L2", "L3", "all"):
            rows = [v for t, v in verdicts.items() if level == "all" or t.startswith(level + "/")]
            strict = [v for v in rows if v.get("correct_strict")]
            speeds = [v["speedup_eager"] for v in strict if v.get("speedup_eager")]
            mean = math.exp(sum(map(math.log, speeds)) / len(speeds)) if speeds else None
            lines.append(
                f"| {name} | {device} | {level} | {len(rows)} | {len(strict)} | "
                f"{sum(s >= FASTER for s in speeds)} | {f'{mean:.2f}x' if mean else '-'} |"
            )
    lines += ["", "## Not strictly correct", ""]
    for name, verdicts in tables.items():
        wrong = sorted(f"{t} ({v['verdict']})" for t, v in verdicts.items() if not v.get("correct_strict"))
        lines.append(f"- {name}: {', '.join(wrong) or 'none'}")
    references = folder / "reference.jsonl"
    if references.exists():
        lines += [
            "",
            "## The float32 reference against float64 (`reference`)",
            "",
            "Where float32 itself misses atol = rtol = 1e-4 against the exact answer, only PyTorch's own "
            "summation order can pass KernelBench's fixed check.",
            "",
            "| task | device | max abs error | output scale | float32 within atol/rtol of float64 | "
            "elements beyond |",
            "|---|---|---|---|---|---|",
        ]
        for line in references.read_text().splitlines():
            r = json.loads(line)
            lines.append(
                f"| {r['task']} | {r['gpu']} | {r['max_abs_err']:.2e} | {r['scale']:.0f} | "
                f"{'yes' if r['passes_fixed_check'] else 'no'} | {r['elements_beyond']} |"
            )
    text = "\n".join(lines) + "\n"
    (folder / "summary.md").write_text(text)
    return text


def reference_error(path: Path, seed: int = 42, device: str = "cuda") -> dict[str, Any]:
    """The float32 reference against float64 on one task: the largest error, the output's scale, whether
    float32 passes KernelBench's atol = rtol = 1e-4 against float64, and how many elements fail."""
    problem = load_problem(path)
    scope: dict[str, Any] = {"__name__": f"kg_reference_{problem.name}"}
    exec(compile(problem.source, str(path), "exec"), scope)  # the project's own task
    torch.manual_seed(seed)
    model = scope["Model"](*scope["get_init_inputs"]()).to(device)
    torch.manual_seed(seed)
    inputs = [t.to(device) if isinstance(t, torch.Tensor) else t for t in scope["get_inputs"]()]
    with torch.no_grad():
        out32 = model(*inputs)
        model64 = copy.deepcopy(model).double()
        previous = torch.get_default_dtype()
        torch.set_default_dtype(torch.float64)
        try:
            out64 = model64(
                *[t.double() if torch.is_tensor(t) and t.is_floating_point() else t for t in inputs]
            )
        finally:
            torch.set_default_dtype(previous)
    diff = (out32.double() - out64).abs()
    allowed = ATOL + RTOL * out64.abs()
    return {
        "task": f"L{problem.level}/{problem.name}",
        "max_abs_err": float(diff.max()),
        "scale": float(out64.abs().max()),
        "passes_fixed_check": bool((diff <= allowed).all()),
        "elements_beyond": int((diff > allowed).sum()),
        "gpu": torch.cuda.get_device_name() if device == "cuda" else device,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("grow", help="write the grown twins of every family task")
    g.add_argument("out", type=Path)
    g.add_argument("--elements", type=int, default=ELEMENTS)
    f = sub.add_parser("reference", help="GPU: the float32 reference's own error against float64")
    f.add_argument("dir", type=Path)
    f.add_argument("tasks", nargs="+", help="L<level>/<name>")
    f.add_argument("--out", type=Path, required=True)
    r = sub.add_parser("report", help="summary.md from the verdict files")
    r.add_argument("--dir", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    if args.command == "grow":
        try:
            factors = write(args.out, args.elements)
        except ProblemError as error:
            print(error, file=sys.stderr)
            return 1
        grown = sum(f > 1 for f in factors.values())
        print(f"{len(factors)} tasks, {grown} grown, into {args.out}")
        return 0
    if args.command == "reference":
        with args.out.open("w") as out:
            for task in args.tasks:
                level, name = task.split("/", 1)
                (path,) = sorted(args.dir.glob(f"level{level[1:]}/*_{name}.py"))
                out.write(json.dumps(reference_error(path)) + "\n")
        return 0
    print(report(args.dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
