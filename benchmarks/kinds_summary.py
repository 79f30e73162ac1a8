"""What the GPU said about the loop kinds (issue "Every op a kind"): strict counts per set, setup and level,
and what iterative refinement did with the bodies its first round got wrong.

Reads the verdict files `scripts/gpu_suite.sh kinds` brought back, saved as
benchmarks/results/kinds/<call>_<set>.verdicts.jsonl (<set>: `families` for the project's own tasks,
`shared` for the shared 30). Files are read in name order and a later verdict for the same job replaces an
earlier one (a task regenerated after a framework fix). Writes summary.md beside them:

    python -m benchmarks.kinds_summary [--dir benchmarks/results/kinds]

Job ids read `strategy:L<level>/<task>|<task>/r<round>s<sample>`; in these files `zero_shot` jobs are the
no-model writer's (`--set writer=rules`).

Repairs are counted twice. On the GPU: a task's run starts at each first-round verdict (a later file that
judges round 1 again starts a new run, and the earlier run stays in the record), and the rounds after it
say whether iterative refinement repaired it. Before the GPU: the local checks (lint, NVRTC, the CPU
emulation) send a refused body back within the round; `<call>_<set>.answers.jsonl` keeps how many answers
each region of the first round took, read from the run directories' traces:

    python -m benchmarks.kinds_summary --answers runs/A runs/B \
        --into benchmarks/results/kinds/4_families.answers.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path

from benchmarks.regions import judged_on
from graph.runner.jsonl import read_jsonl

KINDS = Path(__file__).resolve().parent / "results" / "kinds"
SETUPS = {
    "zero_shot": "no model (the framework's rules), moderate",
    "iterative_refinement": "1.5B, iterative refinement (greedy, k = 3, stop at correct), moderate",
    "profiling_guided": "1.5B, profiling-guided (greedy, conservative)",
}
_ID = re.compile(r"^(\w+):L(\d)/([^|]+)\|[^/]*/r(\d+)s\d+$")
Key = tuple[str, str, str, int]  # set, setup, task (L<level>/<name>), round (0-based)
Run = dict[int, tuple[str, dict]]  # round -> (the file that judged it, its verdict)


def _set_of(path: Path) -> str:
    return "families" if "families" in path.name else "shared"


def _keyed(folder: Path):
    """(file, key, verdict) for every judged job, files in name order."""
    for path in sorted(folder.glob("*.verdicts.jsonl")):
        for v in read_jsonl(path):
            m = _ID.match(str(v.get("job_id", "")))
            if m:
                yield path.name, (_set_of(path), m[1], f"L{m[2]}/{m[3]}", int(m[4])), v


def judged(folder: Path) -> dict[Key, dict]:
    """Every judged job by (set, setup, task, round): the last verdict over the files in name order."""
    return {key: v for _, key, v in _keyed(folder)}


def runs_of(folder: Path) -> dict[tuple[str, str, str], list[Run]]:
    """Each task's runs in the order judged: a first-round verdict starts a run, later rounds join it."""
    out: dict[tuple[str, str, str], list[Run]] = {}
    for name, (which, setup, task, rnd), v in _keyed(folder):
        runs = out.setdefault((which, setup, task), [])
        if rnd == 0 or not runs:
            runs.append({})
        runs[-1][rnd] = (name, v)
    return out


def devices(folder: Path) -> list[str]:
    """The GPU each verdict file was judged on, as its evidence names it."""
    return [f"{p.name}: {judged_on(read_jsonl(p))}" for p in sorted(folder.glob("*.verdicts.jsonl"))]


def _strict(v: dict | None) -> bool:
    return bool(v and v.get("correct_strict"))


def counts(verdicts: dict[Key, dict], which: str) -> list[str]:
    """Per setup and level: tasks, strictly correct at the first round, and at the best round."""
    lines = [
        "| setup | level | tasks | strict, round 1 | strict, any round | x eager, geomean of the correct |",
        "|---|---|---|---|---|---|",
    ]
    for setup, what in SETUPS.items():
        tasks = sorted({t for w, s, t, r in verdicts if (w, s, r) == (which, setup, 0)})
        for level in [*sorted({t[:2] for t in tasks}), "all"]:
            mine = [t for t in tasks if level == "all" or t.startswith(level + "/")]
            first = sum(_strict(verdicts[(which, setup, t, 0)]) for t in mine)
            right = [_best(verdicts, which, setup, t) for t in mine]
            speed = _geomean([v["speedup_eager"] for v in right if v and v.get("speedup_eager")])
            if mine:
                best = sum(v is not None for v in right)
                lines.append(f"| {what} | {level} | {len(mine)} | {first} | {best} | {speed} |")
    return lines


def _best(verdicts: dict[Key, dict], which: str, setup: str, task: str) -> dict | None:
    """The fastest strictly correct round of a task, or None."""
    right = [v for r in range(3) if _strict(v := verdicts.get((which, setup, task, r)))]
    return max(right, key=lambda v: v.get("speedup_eager") or 0.0, default=None)


def _geomean(values: list[float]) -> str:
    return f"{math.exp(sum(map(math.log, values)) / len(values)):.2f}x" if values else "-"


def repairs(runs: dict[tuple[str, str, str], list[Run]]) -> list[str]:
    """Each run of iterative refinement whose first-round body was wrong, its verdict per round."""
    lines = [
        "| set | task | round 1 judged in | round 1 | round 2 | round 3 | repaired |",
        "|---|---|---|---|---|---|---|",
    ]
    wrong = [
        (which, task, run)
        for (which, setup, task), task_runs in sorted(runs.items())
        if setup == "iterative_refinement"
        for run in task_runs
        if 0 in run and not _strict(run[0][1])
    ]
    fixed = tried = 0
    for which, task, run in wrong:
        went_on = any(r > 0 for r in run)
        ok = any(_strict(run[r][1]) for r in run if r > 0)
        fixed, tried = fixed + ok, tried + went_on
        cells = " | ".join(run[r][1]["verdict"] if r in run else "-" for r in range(3))
        said = "yes" if ok else "no" if went_on else "- (not run further)"
        lines.append(f"| {which} | {task} | {run[0][0]} | {cells} | {said} |")
    lines.append(
        f"\nRepaired: {fixed} of the {tried} wrong first-round bodies whose later rounds were judged "
        f"({len(wrong) - tried} more were judged at round 1 only, their tasks run again after a fix)."
    )
    return lines


def answers_of(run_dirs: list[Path]) -> list[dict]:
    """Per task and region, how many answers the first round's local checks took (a later directory's
    record of the same task replaces an earlier one's), and whether the last was still refused."""
    out: dict[str, list[dict]] = {}
    for run_dir in run_dirs:
        for e in read_jsonl(run_dir / "trace.jsonl"):
            if e.get("node") != "generate" or e.get("round") or e.get("sample"):
                continue
            done = e.get("outputs") or {}
            out[e["task"]] = [
                {
                    "task": e["task"],
                    "setup": e["strategy"],
                    "region": region,
                    "answers": n,
                    "refused": region in (done.get("errors") or {}),
                }
                for region, n in sorted((done.get("answers") or {}).items())
            ]
    return [row for rows in out.values() for row in rows]


def local_repairs(folder: Path, verdicts: dict[Key, dict]) -> list[str]:
    """The first-round regions whose first answer the local checks refused, and what became of them."""
    lines = [
        "| set | task | region | answers | passed the local checks | task strict on the GPU |",
        "|---|---|---|---|---|---|",
    ]
    refused = fixed = 0
    for path in sorted(folder.glob("*.answers.jsonl")):
        which = _set_of(path)
        for row in read_jsonl(path):
            if row["answers"] < 2 and not row["refused"]:
                continue
            v = verdicts.get((which, row["setup"], row["task"], 0))
            ok = not row["refused"] and _strict(v)
            refused += 1
            fixed += ok
            lines.append(
                f"| {which} | {row['task']} | {row['region']} | {row['answers']} | "
                f"{'no' if row['refused'] else 'yes'} | {v['verdict'] if v else '-'} |"
            )
    lines.append(
        f"\nRepaired before the GPU: {fixed} of the {refused} first answers the local checks refused "
        "(the region's last answer passed them and its task is strictly correct)."
    )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dir", type=Path, default=KINDS)
    parser.add_argument("--answers", type=Path, nargs="+", help="run directories to read answers from")
    parser.add_argument("--into", type=Path, help="with --answers: the answers file to write")
    args = parser.parse_args(argv)
    if args.answers:
        if not args.into:
            parser.error("--answers needs --into <call>_<set>.answers.jsonl")
        args.into.write_text("".join(json.dumps(row) + "\n" for row in answers_of(args.answers)))
    folder = args.dir
    verdicts = judged(folder)
    if not verdicts:
        print(f"no verdicts under {folder}", file=sys.stderr)
        return 1
    text = [
        "# The loop kinds on the GPU: strict verdicts (greedy, n = 1)",
        "",
        "From these files, judged on (`python -m benchmarks.kinds_summary`):",
        "",
        *(f"- {line}" for line in devices(folder)),
        "",
        "## The project's own tasks per op family (`graph/demo_tasks/families`)",
        "",
        *counts(verdicts, "families"),
        "",
        "## The shared 30 (KernelBench levels 1-3, problems 1-10)",
        "",
        *counts(verdicts, "shared"),
        "",
        "## Iterative refinement: the first round's wrong bodies, round by round",
        "",
        *repairs(runs_of(folder)),
        "",
        "## Before the GPU: first answers the local checks refused, repaired within the round",
        "",
        *local_repairs(folder, verdicts),
        "",
    ]
    (folder / "summary.md").write_text("\n".join(text))
    print("\n".join(text))
    return 0


if __name__ == "__main__":
    sys.exit(main())
