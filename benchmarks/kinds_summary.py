"""What the GPU said about the loop kinds (issue "Every op a kind"): strict counts per set, setup and level,
and what iterative refinement did with the bodies its first round got wrong.

Reads the verdict files `scripts/gpu_suite.sh kinds` brought back, saved as
benchmarks/results/kinds/<call>_<set>.verdicts.jsonl (<set>: `families` for the project's own tasks,
`shared` for the shared 30). Files are read in name order and a later verdict for the same job replaces an
earlier one (a task regenerated after a framework fix). Writes summary.md beside them:

    python -m benchmarks.kinds_summary [--dir benchmarks/results/kinds]

Job ids read `strategy:L<level>/<task>|<task>/r<round>s<sample>`; in these files `zero_shot` jobs are the
no-model writer's (`--set writer=rules`).
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path

from graph.runner.jsonl import read_jsonl

KINDS = Path(__file__).resolve().parent / "results" / "kinds"
SETUPS = {
    "zero_shot": "no model (the framework's rules), moderate",
    "iterative_refinement": "1.5B, iterative refinement (greedy, k = 3, stop at correct), moderate",
    "profiling_guided": "1.5B, profiling-guided (greedy, conservative)",
}
_ID = re.compile(r"^(\w+):L(\d)/([^|]+)\|[^/]*/r(\d+)s\d+$")
Key = tuple[str, str, str, int]  # set, setup, task (L<level>/<name>), round (0-based)


def judged(folder: Path) -> dict[Key, dict]:
    """Every judged job by (set, setup, task, round): the last verdict over the files in name order."""
    out: dict[Key, dict] = {}
    for path in sorted(folder.glob("*.verdicts.jsonl")):
        which = "families" if "families" in path.name else "shared"
        for v in read_jsonl(path):
            m = _ID.match(str(v.get("job_id", "")))
            if m:
                out[(which, m[1], f"L{m[2]}/{m[3]}", int(m[4]))] = v
    return out


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


def repairs(verdicts: dict[Key, dict]) -> list[str]:
    """Each task whose first-round body iterative refinement got wrong, its verdict per round."""
    lines = ["| set | task | round 1 | round 2 | round 3 | repaired |", "|---|---|---|---|---|---|"]
    wrong = sorted(
        (w, t)
        for w, s, t, r in verdicts
        if s == "iterative_refinement" and r == 0 and not _strict(verdicts[(w, s, t, r)])
    )
    fixed = 0
    for which, task in wrong:
        rounds = [verdicts.get((which, "iterative_refinement", task, r)) for r in range(3)]
        ok = any(_strict(v) for v in rounds[1:])
        fixed += ok
        cells = " | ".join(v["verdict"] if v else "-" for v in rounds)
        lines.append(f"| {which} | {task} | {cells} | {'yes' if ok else 'no'} |")
    lines.append(f"\nRepaired: {fixed} of the {len(wrong)} first-round bodies that were wrong.")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dir", type=Path, default=KINDS)
    folder = parser.parse_args(argv).dir
    verdicts = judged(folder)
    if not verdicts:
        print(f"no verdicts under {folder}", file=sys.stderr)
        return 1
    text = [
        "# The loop kinds on the GPU: strict verdicts (H200, greedy, n = 1)",
        "",
        f"From {', '.join(sorted(p.name for p in folder.glob('*.verdicts.jsonl')))} "
        "(`python -m benchmarks.kinds_summary`).",
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
        *repairs(verdicts),
        "",
    ]
    (folder / "summary.md").write_text("\n".join(text))
    print("\n".join(text))
    return 0


if __name__ == "__main__":
    sys.exit(main())
