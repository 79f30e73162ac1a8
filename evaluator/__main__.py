"""CLI for GPU hosts: `python -m evaluator run JOBS.jsonl --out RESULTS.jsonl [--ray [ADDRESS]]`,
`check PROBLEM CANDIDATE`, `profile PROBLEM`, `baseline ROOT --out FILE`."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evaluator.config import EvalConfig

if TYPE_CHECKING:
    from evaluator.jobs import Job
    from evaluator.verdict import Verdict


def _config(args: argparse.Namespace) -> EvalConfig:
    return EvalConfig().replace(**_overrides(args))


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The EvalConfig fields the command line sets (a Ray node fills the rest with its own defaults)."""
    overrides: dict[str, Any] = json.loads(args.config) if args.config else {}
    if args.backend:
        overrides["backend"] = args.backend
    if args.cache_dir:
        overrides["cache_dir"] = args.cache_dir
    return overrides


def _scanned(root: str, args: argparse.Namespace) -> list[Any]:
    """The directory's selected problems; each file that is not a usable problem is said and left out."""
    from evaluator.problem import scan_problems

    problems, broken = scan_problems(root, *_selection(args))
    for error in broken:
        print(f"skipped: {error}", file=sys.stderr)
    return problems


def _selection(args: argparse.Namespace) -> tuple[list[int] | None, list[int] | None]:
    """--levels and --ids as lists of numbers (None: no filter)."""
    levels = [int(x) for x in args.levels.split(",")] if args.levels else None
    ids = [int(x) for x in args.ids.split(",")] if args.ids else None
    return levels, ids


def cmd_run(args: argparse.Namespace) -> int:
    from evaluator.api import evaluate_many
    from evaluator.jobs import cut_torn_line, finished_ids, parse_jobs

    if args.ray_cpus is not None and args.ray:
        raise SystemExit("python -m evaluator: --ray-cpus sizes a new local cluster, not one at an ADDRESS")
    config = _config(args)
    jobs, errors = parse_jobs(args.jobs, config)
    for err in errors:
        print(f"skipped bad job {err}", file=sys.stderr)
    done = finished_ids(args.out)
    todo = [j for j in jobs if j.job_id not in done]
    print(
        f"{len(jobs)} jobs, {len(done & {j.job_id for j in jobs})} already done, {len(todo)} to run",
        file=sys.stderr,
    )
    lock = threading.Lock()
    count = [0]
    t0 = time.perf_counter()
    out_path = Path(args.out)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    cut_torn_line(out_path)
    unjudged: list[str] = []
    with open(out_path, "a") as out:

        def on_result(job_id: str, verdict: dict[str, Any]) -> None:
            with lock:
                out.write(json.dumps({"job_id": job_id, **verdict}) + "\n")
                out.flush()
                count[0] += 1
                _progress(count[0], len(todo), time.perf_counter() - t0, job_id, verdict["verdict"])

        # A time limit's SIGTERM stops the batch like Ctrl-C: workers killed, unfinished jobs left to resume.
        signal.signal(signal.SIGTERM, signal.default_int_handler)
        try:
            if args.ray is None:
                evaluate_many(todo, config, on_result=on_result)
            else:
                unjudged = _run_on_ray(args, todo, on_result)
        except KeyboardInterrupt:
            print(f"\ninterrupted after {count[0]} verdicts; run again to resume", file=sys.stderr)
            return 130
    print(file=sys.stderr)
    if unjudged:
        print(f"{len(unjudged)} jobs got no verdict from the cluster; run again for them", file=sys.stderr)
        return 1
    return 0


def _run_on_ray(
    args: argparse.Namespace, todo: list[Job], on_result: Callable[[str, Verdict], None]
) -> list[str]:
    """The batch as Ray tasks (evaluator.ray_fanout), written by the same `on_result`; ray imported there."""
    from evaluator import ray_fanout

    try:
        return ray_fanout.evaluate_on_ray(
            todo, args.jobs, _overrides(args), on_result, args.ray or None, args.ray_cpus
        )
    except ray_fanout.Unavailable as exc:
        raise SystemExit(f"python -m evaluator: {exc}") from None


def _progress(n: int, total: int, elapsed: float, job_id: str, verdict: str) -> None:
    width = 30
    filled = int(width * n / max(total, 1))
    bar = "#" * filled + "-" * (width - filled)
    sys.stderr.write(f"\r[{bar}] {n}/{total} {elapsed:6.0f}s  {job_id}: {verdict:<14}")
    sys.stderr.flush()


def cmd_check(args: argparse.Namespace) -> int:
    from evaluator.api import evaluate
    from evaluator.problem import load_problem

    verdict = evaluate(load_problem(args.problem), Path(args.candidate).read_text(), _config(args))
    print(json.dumps(verdict, indent=1))
    return 0 if verdict["verdict"] == "correct" else 1


def cmd_profile(args: argparse.Namespace) -> int:
    from evaluator.problem import load_problem
    from evaluator.profile import profile_problem

    config = _config(args)
    store = Path(args.out) if args.out else None
    if Path(args.problem).is_dir():
        problems = _scanned(args.problem, args)
        failed = 0
        for problem in problems:
            result = profile_problem(problem, config, store)
            failed += not result["rows"]
            top = result["rows"][0]["op"] if result["rows"] else result.get("error", "")[-200:]
            print(f"{problem.key}: {len(result['rows'])} ops, top {top}", file=sys.stderr)
        return 1 if failed else 0
    result = profile_problem(load_problem(args.problem), config, store)
    print(result["text"] or result.get("error", ""))
    return 0 if result["rows"] else 1


def cmd_baseline(args: argparse.Namespace) -> int:
    import torch

    from evaluator import baseline, device

    config = _config(args)
    problems = _scanned(args.root, args)
    gpu = device.gpu_name(config.backend)
    known = {} if args.force else baseline.recorded(args.out, gpu, torch.__version__)
    measured = baseline.measure(problems, config, args.budget_s, known)
    entries = measured["entries"]
    for key, e in entries.items():
        print(
            f"{key}: eager {e.get('ms_eager', 'on record')} ms, compile {e['ms_compile']} ms "
            f"{e['compile_note'] or ''}",
            file=sys.stderr,
        )
    if measured["device"]:
        baseline.record(args.out, entries, measured["device"], measured["torch"])
    table = baseline.recorded(args.out, measured["device"] or "", measured["torch"] or "") | known
    print(f"{len(problems) - len(entries)} of {len(problems)} already on record", file=sys.stderr)
    return 0 if all((table.get(p.key) or {}).get("ms_eager") for p in problems) else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evaluator", description=__doc__)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--backend", choices=["cuda", "cpu"])
    common.add_argument("--cache-dir")
    common.add_argument("--config", help="JSON object of EvalConfig overrides")
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("run", parents=[common], help="evaluate a JSONL job file (resumable)")
    p.add_argument("jobs")
    p.add_argument("--out", required=True)
    p.add_argument(
        "--ray",
        nargs="?",
        const="",
        metavar="ADDRESS",
        help="judge across a Ray cluster, one task (one GPU) per candidate: a new local cluster, or the one "
        "at ADDRESS (auto, host:port, ray://host:port); needs the ray extra",
    )
    p.add_argument("--ray-cpus", type=int, help="with --ray and no ADDRESS: the local cluster's CPUs")
    p.set_defaults(fn=cmd_run)
    p = sub.add_parser("check", parents=[common], help="evaluate one candidate file against one problem")
    p.add_argument("problem")
    p.add_argument("candidate")
    p.set_defaults(fn=cmd_check)
    p = sub.add_parser("profile", parents=[common], help="op-level time breakdown of a problem's reference")
    p.add_argument("problem", help="a problem file, or a KernelBench directory to profile every problem")
    p.add_argument("--out", help="profile store directory (default: the cache's profiles/)")
    p.add_argument("--levels")
    p.add_argument("--ids")
    p.set_defaults(fn=cmd_profile)
    p = sub.add_parser("baseline", parents=[common], help="time references eager and compiled into a file")
    p.add_argument("root")
    p.add_argument("--out", required=True)
    p.add_argument("--levels")
    p.add_argument("--ids")
    p.add_argument(
        "--budget-s", type=float, default=480.0, help="stop starting torch.compile timings after this"
    )
    p.add_argument("--force", action="store_true", help="measure again what --out already holds")
    p.set_defaults(fn=cmd_baseline)
    args = parser.parse_args(argv)
    from evaluator.problem import ProblemError

    try:
        return args.fn(args)
    except ProblemError as exc:  # a problem file or directory that cannot be used: one line, no traceback
        raise SystemExit(f"python -m evaluator: {exc}") from None


if __name__ == "__main__":
    sys.exit(main())
