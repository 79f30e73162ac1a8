"""`python -m benchmarks.coverage DIR [DIR ...]`: what region mode offers on any KernelBench-format set.

A task where no region is offered falls back to a whole program, which the small model almost never gets
right, so this is the ceiling of region mode on a set. Per problem: whether it was captured (traced into
regions), whether anything is offered at the ambition, the kinds of the offered regions, what is left to
PyTorch (kept ops by name; regions no contract fits, with why), and, where the profile store has the
problem on some GPU, the share of the reference's GPU time inside the offered regions. Per level: the
counts. CPU only; no model, no GPU.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from evaluator.problem import Problem, ProblemError, scan_problems
from evaluator.profile import find_profile
from regions.model import RegionError
from regions.offering import choose, contracted, cut
from regions.shares import profile_shares
from regions.trace import trace_problem

_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PROFILES = _ROOT / "benchmarks" / "profiles"
DEFAULT_OUT = _ROOT / "benchmarks" / "results" / "coverage"


def problem_coverage(problem: Problem, ambition: str, profiles: Path | None) -> dict[str, Any]:
    """One problem's row: captured, offered, kinds offered, ops left to PyTorch and why, time share."""
    row: dict[str, Any] = {
        "problem": problem.name,
        "level": problem.level,
        "captured": False,
        "offered": False,
    }
    try:
        traced = trace_problem(problem)
        regions = cut(traced, ambition)
    except RegionError as exc:
        return {**row, "why": str(exc)}
    fit, unfit = contracted(regions)
    profile = find_profile(profiles, problem) if profiles is not None else None
    shares = profile_shares(regions, (profile or {}).get("rows") or [], traced.origins)
    chosen = choose(fit, ambition, shares)
    ids = {region.id for region, _ in chosen}
    row.update(
        captured=True,
        offered=bool(chosen),
        regions=len(regions),
        kinds_offered=sorted(region.kind for region, _ in chosen),
        kept_ops=sorted(step.target for r in regions if r.kind == "kept" for step in r.steps),
        no_contract=unfit,
    )
    if profile is not None:
        row["offered_time_share"] = round(sum(shares.get(i, 0.0) for i in ids), 4)
        row["profile_device"] = profile.get("device")
    return row


def summarize(rows: list[dict[str, Any]], broken: list[str]) -> dict[str, Any]:
    """Per level (and over all): problems, captured, offered, the kinds offered, what is left, time share."""
    levels = sorted({r["level"] for r in rows}, key=lambda lv: (lv is None, lv))
    out: dict[str, Any] = {}
    for level in [*levels, "all"]:
        part = [r for r in rows if level == "all" or r["level"] == level]
        timed = [r["offered_time_share"] for r in part if "offered_time_share" in r]
        out[str(level)] = {
            "problems": len(part),
            "captured": sum(r["captured"] for r in part),
            "offered": sum(r["offered"] for r in part),
            "kinds_offered": dict(Counter(k for r in part for k in r.get("kinds_offered", []))),
            "kept_ops": dict(Counter(op for r in part for op in r.get("kept_ops", [])).most_common()),
            "no_contract": sum(len(r.get("no_contract", [])) for r in part),
            "not_captured": [f"{r['problem']}: {r['why']}" for r in part if not r["captured"]],
            "offered_time_share_mean": round(sum(timed) / len(timed), 4) if timed else None,
            "profiled": len(timed),
        }
    out["all"]["unreadable_files"] = broken
    return out


def coverage(root: Path, ambition: str, profiles: Path | None) -> dict[str, Any]:
    """Every readable problem under `root` (a file that cannot be read is listed with its reason)."""
    problems, broken = scan_problems(root)
    rows = [problem_coverage(p, ambition, profiles) for p in problems]
    return {
        "set": str(root),
        "ambition": ambition,
        "rows": rows,
        "summary": summarize(rows, [str(e) for e in broken]),
    }


def markdown(report: dict[str, Any]) -> str:
    """The per-level table and the problems that offer nothing, for a reader."""
    lines = [
        f"# Region coverage of `{report['set']}` at ambition {report['ambition']}",
        "",
        "| level | problems | captured | offered | kinds offered | most kept ops | time share offered |",
        "|---|---|---|---|---|---|---|",
    ]
    for level, s in report["summary"].items():
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(s["kinds_offered"].items())) or "-"
        kept = ", ".join(f"{op.rsplit('.', 1)[-1]} {n}" for op, n in list(s["kept_ops"].items())[:6]) or "-"
        share = (
            "-"
            if s["offered_time_share_mean"] is None
            else f"{s['offered_time_share_mean']:.0%} ({s['profiled']})"
        )
        lines.append(
            f"| {level} | {s['problems']} | {s['captured']} | {s['offered']} | {kinds} | {kept} | {share} |"
        )
    lines += ["", "## Offered nothing", ""]
    for r in report["rows"]:
        if not r["offered"]:
            why = (
                r.get("why")
                or "; ".join(r.get("no_contract", []))
                or "every op kept: " + ", ".join(sorted(set(r.get("kept_ops", []))))
            )
            lines.append(f"- {r['problem']}: {why}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.coverage", description=__doc__)
    parser.add_argument("sets", nargs="+", help="KernelBench-format directories (or level directories)")
    parser.add_argument("--ambition", default="moderate")
    parser.add_argument("--profiles", default=str(DEFAULT_PROFILES), help="profile store; '' for none")
    parser.add_argument("--out", default=str(DEFAULT_OUT))
    parser.add_argument(
        "--label", action="append", default=[], help="a file name per set (default: its name)"
    )
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    profiles = Path(args.profiles) if args.profiles else None
    for k, name in enumerate(args.sets):
        root = Path(name)
        try:
            report = coverage(root, args.ambition, profiles)
        except ProblemError as exc:
            print(f"coverage: {exc}", file=sys.stderr)
            return 2
        label = args.label[k] if k < len(args.label) else root.resolve().name
        (out / f"{label}.json").write_text(json.dumps(report, indent=1) + "\n")
        (out / f"{label}.md").write_text(markdown(report))
        s = report["summary"]["all"]
        print(f"{label}: {s['problems']} problems, {s['captured']} captured, {s['offered']} offered -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
