"""Launch shapes against the first contract, on the model's own kernels, and the shape the model chooses.

Each greedy body of the region benchmark (benchmarks/results/regions/samples.jsonl: the embedded 1.5B,
one conservative region per shared problem) goes out on its first contract (one thread per output
element or row) and, unchanged, on every launch shape of regions.shapes that fits its region
and that it moves to (tiled products, vector4 maps, block_row reductions). All are judged in one GPU run,
so the ratio of their times is what a move gains, without a model call. `choose` asks the embedded model,
as the fast second does, which shape each of its correct kernels should run on, given the kernel's lines
and its measured time on the first contract (benchmarks/results/regions/region_verdicts.jsonl); the
report says what the chosen shapes measured.

    python -m benchmarks.launch_shapes jobs --jobs .device/shapes/jobs.jsonl          # here
    python -m benchmarks.launch_shapes jobs --by-rule --jobs ...    # the same with the framework's bodies
    python -m benchmarks.launch_shapes choose                                         # here, the model
    python -m evaluator run JOBS --out VERDICTS --config '{"reference_compile": "baseline", ...}'  # GPU
    python -m benchmarks.launch_shapes report --verdicts VERDICTS                       # here
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from benchmarks.regions import KERNELBENCH, RESULTS, RUNS, judged_on, offered_region, region_job
from graph.runner.jsonl import read_jsonl

CHOICES = RESULTS / "launch_shape_choices.jsonl"


def _greedy(kernelbench: Path, samples: Path) -> list[tuple[Any, Any, Any, str]]:
    """(problem, region, first contract, greedy body) per problem of the samples the suite holds."""
    from evaluator.problem import load_problems

    problems = {p.key: p for p in load_problems(kernelbench)}
    out = []
    for row in read_jsonl(samples):
        if row.get("sample") != 0 or row.get("problem") not in problems or not row.get("body"):
            continue
        problem = problems[row["problem"]]
        region, first = offered_region(problem)
        out.append((problem, region, first, row["body"]))
    return out


def _by_rule(kernelbench: Path) -> list[tuple[Any, Any, Any, str]]:
    """(problem, region, first contract, body) with the body the framework writes by rule (regions.rules:
    the no-model writer), for every problem whose offered region a rule covers."""
    from evaluator.problem import load_problems
    from regions.model import RegionError
    from regions.rules import rule_body

    out = []
    for problem in load_problems(kernelbench):
        try:
            region, first = offered_region(problem)
        except RegionError as exc:
            print(f"left out: {problem.key}: {exc}", file=sys.stderr)
            continue
        body = rule_body(region, first)
        if body:
            out.append((problem, region, first, body))
    return out


def write_jobs(kernelbench: Path, samples: Path, jobs_path: Path, by_rule: bool = False) -> int:
    """`<problem>/first` and `<problem>/<shape>` for every shape a greedy body (or, by_rule, the
    framework's own body) moves to unchanged."""
    from regions.check import check
    from regions.export import Written
    from regions.shapes import FIRST, moves_unchanged, shapes_for

    lines, skipped = [], []
    bodies = _by_rule(kernelbench) if by_rule else _greedy(kernelbench, samples)
    for problem, region, first, body in bodies:
        menu = shapes_for(region)
        if not menu:
            skipped.append(f"{problem.key}: no launch shape fits its {region.kind} region")
            continue
        moved = [(s.name, c) for s, c in menu if moves_unchanged(body) and check(c, body).ok]
        if not moved:
            skipped.append(f"{problem.key}: the body touches memory itself or does not compile on a shape")
            continue
        for shape, contract in [(FIRST, first), *moved]:
            lines.append(region_job(f"{problem.key}/{shape}", problem, [Written(region, contract, body)]))
    jobs_path.parent.mkdir(parents=True, exist_ok=True)
    jobs_path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    for why in skipped:
        print(f"left out: {why}", file=sys.stderr)
    print(f"{len(lines)} jobs -> {jobs_path}", file=sys.stderr)
    return 0


def choose(kernelbench: Path, samples: Path, verdicts: Path, out: Path) -> int:
    """The model's choice for each strictly correct greedy kernel that has a shape menu, as the fast
    second asks it: its lines, its measured time on the first contract, the shapes that fit."""
    from nodes.region_triage import timing_text
    from nodes.shape_choice import choose_shape
    from regions.shapes import shapes_for

    judged = {
        str(v["job_id"]).rsplit("/", 1)[0]: v for v in read_jsonl(verdicts) if v["job_id"].endswith("/s0")
    }
    rows = []
    for problem, region, _, body in _greedy(kernelbench, samples):
        verdict = judged.get(problem.key) or {}
        menu = [s for s, _ in shapes_for(region)]
        if not menu or not verdict.get("correct_strict"):
            continue
        picked = choose_shape(region, body, timing_text(verdict), menu)
        rows.append(
            {
                "problem": problem.key,
                "kind": region.kind,
                "menu": [s.name for s in menu],
                "shape": picked.shape,
                "why": picked.why,
                "valid": picked.valid,
                "seconds": round(picked.seconds, 2),
            }
        )
        print(f"{problem.key}: {picked.shape} ({picked.why})", file=sys.stderr, flush=True)
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    print(f"{len(rows)} choices -> {out}", file=sys.stderr)
    return 0


def summarise(verdicts: list[dict[str, Any]], choices: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Per problem: each shape's strict verdict and speedups; each shape's time ratio over the first
    contract where both are strictly correct, its geomean per shape, and what the model's choice got."""
    by: dict[str, dict[str, dict[str, Any]]] = {}
    for v in verdicts:
        problem, _, shape = str(v["job_id"]).rpartition("/")
        by.setdefault(problem, {})[shape] = v
    picked = {c["problem"]: c for c in choices or []}
    rows, gains = [], {}
    for problem, shapes in sorted(by.items()):
        row: dict[str, Any] = {"problem": problem, "shapes": {}, "over_first": {}}
        for shape, v in shapes.items():
            row["shapes"][shape] = {
                "verdict": v.get("verdict"),
                "why": _why(v),
                "strict": bool(v.get("correct_strict")),
                "speedup_eager": v.get("speedup_eager"),
                "speedup_compile": v.get("speedup_compile"),
            }
        first = row["shapes"].get("first") or {}
        for shape, s in row["shapes"].items():
            if (
                shape != "first"
                and first.get("strict")
                and s["strict"]
                and first["speedup_eager"]
                and s["speedup_eager"]
            ):
                row["over_first"][shape] = round(s["speedup_eager"] / first["speedup_eager"], 2)
                gains.setdefault(shape, []).append(row["over_first"][shape])
        if problem in picked:
            row["chosen"] = picked[problem]["shape"]
        rows.append(row)
    geomean = {s: round(math.exp(sum(map(math.log, g)) / len(g)), 2) for s, g in gains.items()}
    chose = [r for r in rows if "chosen" in r]
    return {
        "problems": rows,
        "compared": {s: len(g) for s, g in gains.items()},
        "geomean_over_first": geomean,
        "choices": len(chose),
        "chose_a_shape": sum(r["chosen"] != "first" for r in chose),
        "chosen_and_faster": sum(r["over_first"].get(r["chosen"], 0) > 1 for r in chose),
    }


def _why(verdict: dict[str, Any]) -> str:
    """Where a verdict that is not strictly correct failed: the strict checks it missed and how many
    elements were off (the signed-input trial is where a changed summation order shows)."""
    if verdict.get("correct_strict") or not verdict:
        return ""
    evidence = verdict.get("evidence") or {}
    signed = (evidence.get("strict") or {}).get("signed_trial") or {}
    failures = ", ".join(evidence.get("strict_failures") or []) or str(verdict.get("verdict"))
    if signed.get("mismatches"):
        return f"{failures}: {signed['mismatches']} elements, max abs err {signed.get('max_abs_err', 0):.1e}"
    return failures


def markdown(summary: dict[str, Any], device: str, by_rule: bool = False) -> str:
    def x(value: float | None) -> str:
        return f"{value:.2f}x" if value else "-"

    whose = "the framework's rule-written bodies (no model)" if by_rule else "the model's greedy kernels"
    lines = [
        f"# Launch shapes on {whose}",
        "",
        f"Measured on {device}; the same body on each shape, judged strictly in one run "
        "(benchmarks/launch_shapes.py)."
        + (
            ""
            if by_rule
            else " `chosen`: the shape the embedded model picked for its correct kernel, as the fast "
            "second asks it (`first` keeps the launch and asks for faster lines)."
        ),
        "",
        "| problem | shape | verdict | vs eager | vs compile | over first | chosen |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in summary["problems"]:
        for shape, s in sorted(r["shapes"].items(), key=lambda kv: kv[0] != "first"):
            verdict = s["verdict"] + (f" ({s['why']})" if s["why"] else "")
            chosen = "yes" if r.get("chosen") == shape else ""
            lines.append(
                f"| {r['problem']} | {shape} | {verdict} | {x(s['speedup_eager'])} | "
                f"{x(s['speedup_compile'])} | {x(r['over_first'].get(shape))} | {chosen} |"
            )
    lines.append("")
    for shape, g in sorted(summary["geomean_over_first"].items()):
        lines.append(
            f"- {shape}: geomean {x(g)} over the first contract on {summary['compared'][shape]} problems"
        )
    if not by_rule:
        lines.append(
            f"- the model chose a new shape for {summary['chose_a_shape']} of {summary['choices']} correct "
            f"kernels; {summary['chosen_and_faster']} of those choices measured faster than the first "
            "contract"
        )
    return "\n".join(lines) + "\n"


def report(verdicts_path: Path, results: Path, choices: Path, by_rule: bool = False) -> int:
    verdicts = read_jsonl(verdicts_path)
    if not verdicts:
        print(f"no verdicts in {verdicts_path}", file=sys.stderr)
        return 1
    summary = summarise(verdicts, [] if by_rule else read_jsonl(choices))
    device = judged_on(verdicts)
    summary["device"] = device
    (results / "launch_shapes.json").write_text(json.dumps(summary, indent=1) + "\n")
    text = markdown(summary, device, by_rule)
    (results / "launch_shapes.md").write_text(text)
    print(text)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="cmd", required=True)
    j = sub.add_parser("jobs")
    j.add_argument("--kernelbench", type=Path, default=KERNELBENCH)
    j.add_argument("--samples", type=Path, default=RUNS / "samples.jsonl")
    j.add_argument("--jobs", type=Path, required=True)
    j.add_argument("--by-rule", action="store_true", help="the no-model writer's bodies, not the model's")
    c = sub.add_parser("choose")
    c.add_argument("--kernelbench", type=Path, default=KERNELBENCH)
    c.add_argument("--samples", type=Path, default=RUNS / "samples.jsonl")
    c.add_argument("--verdicts", type=Path, default=RUNS / "region_verdicts.jsonl")
    c.add_argument("--out", type=Path, default=CHOICES)
    r = sub.add_parser("report")
    r.add_argument("--verdicts", type=Path, required=True)
    r.add_argument("--results", type=Path, default=RESULTS)
    r.add_argument("--choices", type=Path, default=CHOICES)
    r.add_argument("--by-rule", action="store_true", help="the verdicts of `jobs --by-rule`")
    args = parser.parse_args(argv)
    if args.cmd == "jobs":
        return write_jobs(args.kernelbench, args.samples, args.jobs, args.by_rule)
    if args.cmd == "choose":
        return choose(args.kernelbench, args.samples, args.verdicts, args.out)
    return report(args.verdicts, args.results, args.choices, args.by_rule)


if __name__ == "__main__":
    sys.exit(main())
