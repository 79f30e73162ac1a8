"""kernelgraph's entry point: run strategies over tasks with the local model, then print the table per level.

The default run (no arguments) is the main job on embedded defaults: the six demo tasks, all four
strategies, one sample per round, two rounds, the embedded Qwen2.5-Coder-1.5B model, in region mode (the
model writes kernel bodies, the framework everything else). Without a GPU here the region kernels are
written and checked here and their jobs wait for a GPU host. Every run writes a directory
(runs/<time>) with results.jsonl, trace.jsonl and a SQLite checkpoint; `--resume DIR` continues it
after any stop.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

EPILOG = """\
time: the default run writes the six demo tasks' region kernels with all four strategies (about 30 model
calls). Measured on a 2-core CPU without a GPU: 6 minutes (358 s), every candidate written and checked with
NVRTC here and left in RUN/jobs.jsonl for a GPU host; with --format program it takes 45-60 minutes. A
stopped run loses nothing: `--resume DIR` continues it.

examples:
  run.py                                          the main job: demo tasks, all strategies
  run.py --list-tasks                             the demo tasks (and KernelBench ones with --kernelbench-dir)
  run.py -s zero_shot -n 4 --tasks 1-3            best-of-4 zero-shot on demo tasks 1-3
  run.py --preset repaired-agent --kernelbench-dir ../shared/kernelbench --level 1 --problems 1-5
  run.py --prompt generate=my_prompt.md --ambition aggressive
  run.py --backend cuda --evaluator deferred ...  generate here, evaluate the job file on a GPU host:
      python -m evaluator run RUN/jobs.jsonl --out verdicts.jsonl     (on the GPU host)
      python -m evaluator run RUN/jobs.jsonl --out verdicts.jsonl --ray ADDRESS   (or across a Ray cluster)
      run.py --resume RUN --results verdicts.jsonl                    (here; repeat while graphs pause)
  run.py --resume runs/20260101-120000            finish a sweep that was stopped or killed
"""


def build_parser() -> argparse.ArgumentParser:
    """The flags; their choices and the defaults they name come from nodes.context, the one source."""
    from nodes.context import FORMATS, STRATEGIES, Context, choices

    default = Context()
    parser = argparse.ArgumentParser(
        prog="run.py",
        description=__doc__,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    what = parser.add_argument_group("what to run")
    what.add_argument(
        "-s",
        "--strategy",
        action="append",
        choices=STRATEGIES,
        metavar="NAME",
        help=f"strategy, repeatable: {', '.join(STRATEGIES)} (default: all, or the preset's)",
    )
    what.add_argument("--preset", help="a named configuration from nodes.presets (see --list-tasks)")
    what.add_argument("--tasks", metavar="RANGE", help="demo task numbers, e.g. 1-3,5 (default: all six)")
    what.add_argument(
        "--kernelbench-dir",
        type=Path,
        metavar="DIR",
        help="use a KernelBench-format directory (levelN/ID_Name.py) instead of the demo tasks",
    )
    what.add_argument("--level", metavar="RANGE", help="KernelBench levels, e.g. 1 or 1-2 (default: all)")
    what.add_argument("--problems", metavar="RANGE", help="problem ids within each level, e.g. 1-5")
    what.add_argument(
        "--list-tasks", action="store_true", help="list tasks, strategies and presets, then exit"
    )
    knobs = parser.add_argument_group("strategy knobs (the graphs' context)")
    knobs.add_argument(
        "-n", "--samples", type=int, help=f"candidates per round, best-of-n (default {default.samples})"
    )
    knobs.add_argument(
        "-k",
        "--rounds",
        type=int,
        help=f"rounds for iterative_refinement and agent (default {default.rounds})",
    )
    knobs.add_argument(
        "--ambition",
        choices=choices("ambition"),
        help=f"how much of the model to rewrite (default {default.ambition})",
    )
    knobs.add_argument(
        "--format",
        choices=FORMATS,
        help="the model writes whole programs, or kernel bodies in framework-written region contracts "
        "(regions: CUDA only, judged as the evaluator's region kind) (default regions)",
    )
    knobs.add_argument(
        "--temperature",
        type=float,
        help=f"sampling temperature of generation (default {default.temperature})",
    )
    knobs.add_argument(
        "--max-tokens",
        type=int,
        help=f"completion budget per generation call (default {default.max_tokens})",
    )
    knobs.add_argument(
        "--prompt",
        action="append",
        default=[],
        metavar="NODE=PATH_OR_TEXT",
        help="replace a node's prompt for this run (a .md path or the text), repeatable",
    )
    knobs.add_argument(
        "--backend",
        choices=choices("backend"),
        help="cuda kernels or C++ (cpu) kernels (default: cuda if torch sees a GPU, else cpu)",
    )
    knobs.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="any other context field (retrieval_k, feedback, replans, stop_on, seed, writer, emulate, ...), "
        "repeatable; VALUE is JSON or a plain string",
    )
    knobs.add_argument(
        "--evaluator",
        choices=choices("evaluator"),
        help=f"evaluate here, or pause and write a job file for a GPU host (default {default.evaluator})",
    )
    model = parser.add_argument_group("model")
    model.add_argument("--model", metavar="PATH", help="a GGUF file (also env KERNELGRAPH_MODEL)")
    model.add_argument("--hf-repo", help="download the GGUF from this Hugging Face repo (with --hf-file)")
    model.add_argument("--hf-file", help="the GGUF file name in --hf-repo")
    out = parser.add_argument_group("output and resuming")
    out.add_argument("--out", type=Path, metavar="DIR", help="run directory (default runs/<UTC time>)")
    out.add_argument("--resume", type=Path, metavar="DIR", help="continue the run in DIR with its settings")
    out.add_argument(
        "--results",
        type=Path,
        metavar="FILE",
        help="with --resume: evaluator results for DIR/jobs.jsonl, to continue paused graphs",
    )
    out.add_argument(
        "--write-jobs",
        action="store_true",
        help="with --resume: write DIR/jobs.jsonl from the paused graphs' checkpoints and run nothing "
        "(safe while another process is still sweeping DIR)",
    )
    out.add_argument("--no-live", action="store_true", help="print one line per step instead of a live table")
    return parser


def list_tasks(args: argparse.Namespace) -> int:
    from graph.runner.suite import demo_tasks, kernelbench_tasks, parse_ranges, task_key
    from nodes.context import STRATEGIES
    from nodes.presets import PRESETS

    rows = demo_tasks()
    if args.kernelbench_dir:
        with _task_errors():
            levels, ids = parse_ranges(args.level), parse_ranges(args.problems)
            rows += kernelbench_tasks(args.kernelbench_dir, levels, ids, on_skip=_skipped)
    print("tasks (level 0 = the demo tasks; --tasks picks demo numbers):")
    for task in rows:
        print(f"  {task['problem_id']:>3}  {task_key(task)}")
    print("strategies: " + ", ".join(STRATEGIES))
    print("presets:")
    for preset in PRESETS.values():
        print(f"  {preset.name:<17} ({preset.strategy}) {preset.description}")
    return 0


@contextlib.contextmanager
def _task_errors() -> Iterator[None]:
    """A task selection that names nothing, or a directory that is not there, is one line, not a traceback."""
    from evaluator.problem import ProblemError
    from graph.runner.suite import SuiteError

    try:
        yield
    except (SuiteError, ProblemError) as exc:
        raise SystemExit(f"run.py: {exc}") from None


def _skipped(reason: str) -> None:
    """A problem file that cannot be used is left out and said, and the run goes on."""
    print(f"skipped: {reason}", file=sys.stderr)


def parse_prompts(items: list[str]) -> dict[str, str]:
    prompts = {}
    for item in items:
        node, sep, value = item.partition("=")
        if not sep or not node.strip() or not value:
            raise SystemExit(f"--prompt wants NODE=PATH_OR_TEXT, got {item!r}")
        prompts[node.strip()] = value
    return prompts


def parse_fields(items: list[str]) -> dict[str, Any]:
    """--set FIELD=VALUE pairs, checked against the Context's fields."""
    from nodes.context import Context

    known = {f.name for f in dataclasses.fields(Context)}
    fields: dict[str, Any] = {}
    for item in items:
        name, sep, text = item.partition("=")
        if not sep or name.strip() not in known:
            raise SystemExit(
                f"--set wants FIELD=VALUE with FIELD one of {', '.join(sorted(known))}; got {item!r}"
            )
        try:
            fields[name.strip()] = json.loads(text)
        except json.JSONDecodeError:
            fields[name.strip()] = text
    return fields


def default_backend(fmt: str | None) -> tuple[str, bool]:
    """The backend where none was asked for, and whether evaluation must wait for a GPU host.

    A GPU here: cuda, judged here. None: region kernels are still CUDA (written and checked here with
    NVRTC; their jobs go to a GPU host), while whole programs fall back to C++ kernels on the CPU."""
    import torch

    if torch.cuda.is_available():
        return "cuda", False
    if fmt == "regions":
        return "cuda", True
    return "cpu", False


def new_settings(args: argparse.Namespace) -> dict[str, Any]:
    """Everything a run needs, resolved once and saved to run.json so --resume repeats it exactly.

    A knob left unset is left out: the preset's value or the Context's default applies.
    """
    from graph.runner.suite import select_tasks
    from nodes.context import STRATEGIES
    from nodes.presets import PRESETS, preset_values

    preset_fields = preset_values(args.preset) if args.preset else {}
    fields: dict[str, Any] = parse_fields(args.set)
    for name, value in (
        ("samples", args.samples),
        ("rounds", args.rounds),
        ("ambition", args.ambition),
        ("temperature", args.temperature),
        ("max_tokens", args.max_tokens),
        ("backend", args.backend),
        ("evaluator", args.evaluator),
    ):
        if value is not None:
            fields[name] = value
    if args.prompt:
        fields["prompts"] = parse_prompts(args.prompt)
    if "backend" not in fields and "backend" not in preset_fields:
        fields["backend"], deferred = default_backend(args.format or "regions")
        if deferred and "evaluator" not in fields and "evaluator" not in preset_fields:
            fields["evaluator"] = "deferred"
    strategies = args.strategy or ([PRESETS[args.preset].strategy] if args.preset else list(STRATEGIES))
    with _task_errors():
        tasks = select_tasks(args.kernelbench_dir, args.level, args.problems, args.tasks, on_skip=_skipped)
    return {
        "strategies": list(dict.fromkeys(strategies)),
        "format": args.format or "regions",
        "preset": args.preset,
        "context_fields": fields,
        "tasks": tasks,
        "model": {"path": args.model, "hf_repo": args.hf_repo, "hf_file": args.hf_file},
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def make_context(settings: dict[str, Any]) -> Any:
    from nodes.context import Context

    if settings.get("preset"):
        return Context.from_preset(settings["preset"], **settings["context_fields"])
    return Context(**settings["context_fields"])


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.list_tasks:
        return list_tasks(args)
    if args.results and not args.resume:
        raise SystemExit("--results goes with --resume DIR (the run whose jobs it answers)")
    if args.write_jobs and not args.resume:
        raise SystemExit("--write-jobs goes with --resume DIR (the run whose paused graphs it reads)")
    from graph.runner.rundir import RunBusyError, RunDir, new_run_path

    if args.resume:
        run_dir = RunDir(args.resume)
        settings = run_dir.load_settings()
        if args.write_jobs:
            return write_paused_jobs(run_dir, settings)
        if args.model or args.hf_repo:
            settings["model"] = {"path": args.model, "hf_repo": args.hf_repo, "hf_file": args.hf_file}
    else:
        run_dir = RunDir(args.out or new_run_path(Path("runs")))
        if run_dir.settings_file.exists():
            raise SystemExit(f"{run_dir.path} already holds a run; use --resume {run_dir.path}")
        settings = new_settings(args)
        run_dir.save_settings(settings)
    try:
        with run_dir.sweeping():  # taken before the results and trace files are opened for appending
            return execute(run_dir, settings, args.results, live=None if not args.no_live else False)
    except RunBusyError as exc:
        raise SystemExit(str(exc)) from None


def write_paused_jobs(run_dir: Any, settings: dict[str, Any]) -> int:
    """The run's job file as its checkpoints stand now; loads no model and continues no graph."""
    from graph import compile_graph
    from graph.runner.deferred import write_jobs
    from graph.runner.sweep import paused_jobs

    with run_dir.checkpointer() as saver:
        graphs = {s: compile_graph(s, saver, settings["format"]) for s in settings["strategies"]}
        lines = paused_jobs(graphs, settings["tasks"])
    write_jobs(run_dir.jobs, lines)
    print(f"{len(lines)} job(s) of paused graphs -> {run_dir.jobs}")
    return 0


def execute(run_dir: Any, settings: dict[str, Any], results_file: Path | None, live: bool | None) -> int:
    """Configure the model, run the sweep, print and save the table, and say what to do next."""
    from rich.console import Console

    from graph import compile_graph
    from graph.runner import report
    from graph.runner.deferred import load_results
    from graph.runner.jsonl import read_jsonl
    from graph.runner.progress import ProgressView
    from graph.runner.results import ResultsFile
    from graph.runner.suite import task_key
    from graph.runner.sweep import Sweep, context_record
    from graph.runner.trace import TraceFile
    from nodes.model.llm import configure_model, model_info

    console = Console()
    if not console.is_terminal:
        console.width = max(console.width, 150)  # logs and CI: keep the table's columns readable
    configure_model(**settings["model"])
    context = make_context(settings)
    job_results = load_results(results_file) if results_file else None
    info = model_info()
    console.print(
        f"model: {info.get('name')} {info.get('quantisation') or ''} "
        f"({_size(info.get('size_bytes'))}, {info.get('source', 'scripted')}: {info.get('path')})",
        highlight=False,
    )
    console.print(
        f"run: {run_dir.path}  strategies: {', '.join(settings['strategies'])}  "
        f"tasks: {len(settings['tasks'])}  backend: {context.backend}  "
        f"evaluator: {context.evaluator}  n={context.samples} k={context.rounds}  "
        f"ambition: {context.ambition}  format: {settings['format']}",
        highlight=False,
    )
    run_info = {
        "run": str(run_dir.path),
        "preset": settings.get("preset"),
        "model": info,
        "context": context_record(context),
        "format": settings["format"],
        "backend": context.backend,
        "evaluator": context.evaluator,
        "commit": checkout_commit(),
    }
    pairs = [(task_key(t), s) for t in settings["tasks"] for s in settings["strategies"]]
    results, trace = ResultsFile(run_dir.results), TraceFile(run_dir.trace)
    try:
        with run_dir.checkpointer() as saver:
            graphs = {s: compile_graph(s, saver, settings["format"]) for s in settings["strategies"]}
            with ProgressView(pairs, console=console, live=live) as progress:
                outcome = Sweep(
                    graphs, settings["tasks"], context, results, trace, progress, run_info, job_results
                ).run(run_dir.jobs)
    finally:
        results.close()
        trace.close()
    rows = report.summarise(list(results.records.values()))
    run_dir.summary.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    console.print(
        report.render(
            rows,
            title=f"results per level ({len(results.records)}/{len(pairs)} finished; "
            "correct = strict verdict)",
        )
    )
    if outcome.paused:
        console.print(report.pending(read_jsonl(outcome.jobs_file)))
        console.print(
            f"{len(outcome.paused)} graph(s) paused with {outcome.jobs} candidate(s) to evaluate in "
            f"{outcome.jobs_file}\n  on a GPU host: python -m evaluator run {outcome.jobs_file} "
            f"--out verdicts.jsonl\n  then here:     python run.py --resume {run_dir.path} "
            "--results verdicts.jsonl",
            highlight=False,
        )
    if outcome.failed:
        console.print(
            f"{len(outcome.failed)} graph(s) failed (see 'error' lines in {run_dir.trace}): "
            + ", ".join(f"{s} on {t}" for t, s in outcome.failed)
            + f"\n  retry them from where they stopped: python run.py --resume {run_dir.path}",
            highlight=False,
            markup=False,
        )
    console.print(f"results: {run_dir.results}  trace: {run_dir.trace}", highlight=False)
    return 1 if outcome.failed else 0


def checkout_commit() -> str | None:
    """The commit this checkout is at ("+dirty" with uncommitted changes to tracked files), kept on every
    results line: a run that spans sessions says which pipeline finished each task. None outside git."""

    def git(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["git", *args], cwd=Path(__file__).resolve().parent, capture_output=True, text=True
        )

    try:
        head, dirty = (
            git("rev-parse", "--short=12", "HEAD"),
            git("status", "--porcelain", "--untracked-files=no"),
        )
    except OSError:
        return None
    if head.returncode != 0:
        return None
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def _size(size: Any) -> str:
    return f"{size / 1e9:.2f} GB" if isinstance(size, int | float) else "size n/a"


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sys.exit(main())
