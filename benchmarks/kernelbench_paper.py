"""The paper's experiment: 30 KernelBench tasks x strategies x best-of-n, generated here, evaluated on a GPU.

Generation runs on this host's CPU with the embedded model; evaluation runs in deferred rounds on the GPU
host. Every configuration is an ordinary run directory under runs/paper/ (checkpointed, resumable), so the
experiment spans sessions without redoing work. runs/ is not committed: on a fresh checkout `generate`
seeds each missing run directory with the tasks the committed results (benchmarks/results/paper/) already
hold, so only unfinished tasks are generated again. One command per phase:

    python -m benchmarks.kernelbench_paper generate [CONFIG ...]   # CPU: start or continue the runs
    python -m benchmarks.kernelbench_paper jobs --out JOBS.jsonl   # every paused run's jobs, in one file
    python -m evaluator run JOBS.jsonl --out VERDICTS.jsonl        # on the GPU host (resumable)
    python -m benchmarks.kernelbench_paper resume VERDICTS.jsonl   # CPU: hand verdicts back, next round
    python -m benchmarks.kernelbench_paper report                  # table + plots in benchmarks/results/

Repeat jobs / evaluate / resume until `status` shows nothing paused. To rerun the experiment on today's
pipeline rather than continue the committed one, give every command `--fresh --runs runs/paper_rerun`: the
rerun keeps its own committed results (benchmarks/results/paper_rerun/), seeds from them the same way, and
so spans sessions too. Every results line names the commit its task finished at; the table lists them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from benchmarks.paper_report import NO_MODEL_CONFIG, REGIONS, write_report
from graph.runner.jsonl import read_jsonl

REPO = Path(__file__).resolve().parents[1]
KERNELBENCH = REPO.parent / "shared" / "kernelbench"
PROFILES = REPO / "benchmarks" / "profiles"
RESULTS = REPO / "benchmarks" / "results" / "paper"
RERUN = REPO / "benchmarks" / "results" / "paper_rerun"  # the experiment again on today's pipeline (--fresh)
SEP = "::"
ALIASES = "job_aliases.json"
SENT = "sent.jsonl"


@dataclass(frozen=True)
class Config:
    """One run of the experiment: a strategy and its knobs, as run.py arguments."""

    name: str
    args: tuple[str, ...]
    what: str
    needs_profiles: bool = False


SETUPS: tuple[Config, ...] = (
    Config("zero_shot", ("--preset", "zero-shot"), "zero-shot, greedy, n=1"),
    Config(
        "profiling_guided",
        ("--preset", "profiling-guided", "--set", f"profiles={PROFILES}"),
        "profiling-guided, conservative, greedy, n=1",
        needs_profiles=True,
    ),
    Config(
        "iterative_refinement",
        ("-s", "iterative_refinement", "-n", "1", "-k", "3", "--temperature", "0"),
        "iterative refinement on execution feedback, greedy, n=1, 3 rounds",
    ),
    Config(
        "repaired_agent",
        ("--preset", "repaired-agent", "-n", "1", "-k", "3"),
        "repaired agent (moderate, retrieval, focused triage), n=1, 3 rounds",
    ),
    Config(
        "naive_agent",
        ("--preset", "naive-agent", "-k", "3"),
        "naive agent (aggressive, raw log + 'fix it', no retrieval), n=1, 3 rounds",
    ),
    Config(
        "profiling_guided_n8",
        ("--preset", "profiling-guided", "-n", "8", "--temperature", "0.8", "--set", f"profiles={PROFILES}"),
        "profiling-guided, 8 samples at T=0.8: the best-of-n curve",
        needs_profiles=True,
    ),
    Config(
        "repaired_agent_n8",
        ("--preset", "repaired-agent", "-n", "8", "-k", "1"),
        "repaired agent, one round of 8 samples at T=0.7: the best-of-n curve",
    ),
)


def _in_format(setup: Config, fmt: str) -> Config:
    """The setup as the paper ran it (the model writes whole programs) or on region contracts."""
    suffix = REGIONS if fmt == "regions" else ""
    what = setup.what + (", region contracts" if suffix else ", whole programs")
    return Config(setup.name + suffix, (*setup.args, "--format", fmt), what, setup.needs_profiles)


# The framework's own bodies (regions.rules), no model loaded: region contracts only, at the zero-shot
# preset's ambition. The model's rows beside it show what the model adds on top of the framework.
NO_MODEL = Config(
    NO_MODEL_CONFIG,
    ("--preset", "zero-shot", "--set", "writer=rules", "--format", "regions"),
    "no model: every body written by rule from the region's steps, region contracts",
)

CONFIGS: dict[str, Config] = {
    **{c.name: c for fmt in ("program", "regions") for c in (_in_format(s, fmt) for s in SETUPS)},
    NO_MODEL.name: NO_MODEL,
}


def config_format(name: str) -> str:
    """Which format a configuration's name says it ran in."""
    return "regions" if name.endswith(REGIONS) else "program"


def run_dir(runs: Path, name: str) -> Path:
    return runs / name


def missing_profiles(kernelbench: Path, store: Path) -> list[str]:
    """Problems of the suite without a profile in the store (profiling configs must not run without)."""
    from evaluator.problem import load_problems
    from evaluator.profile import find_profile

    return [p.key for p in load_problems(kernelbench) if find_profile(store, p) is None]


def seed_from_results(run: Path, name: str, results: Path) -> int:
    """Give a run directory that does not exist yet the finished tasks and verdicts of `name` that the
    committed report in `results` holds; the sweep skips those tasks. Returns how many tasks it seeded."""
    if run.exists():
        return 0
    finished = [
        {k: v for k, v in r.items() if k != "config"}
        for r in read_jsonl(results / "results.jsonl")
        if r.get("config") == name
    ]
    if not finished:
        return 0
    run.mkdir(parents=True)
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in finished))
    verdicts = results / "verdicts" / f"{name}.jsonl"
    if verdicts.exists():
        (run / "verdicts.jsonl").write_text(verdicts.read_text())
    print(f"{name}: {len(finished)} finished tasks taken from {results}", file=sys.stderr, flush=True)
    return len(finished)


def generate(names: list[str], runs: Path, kernelbench: Path, results: Path = RESULTS) -> int:
    """Start each configuration's run, or continue it (run.py --resume) when its directory exists. A run
    directory missing on this checkout starts from the tasks the committed `results` already finished."""
    failed = 0
    for name in names:
        config = CONFIGS[name]
        if config.needs_profiles and (missing := missing_profiles(kernelbench, PROFILES)):
            print(
                f"{name}: skipped, {len(missing)} problems lack an H200 profile in {PROFILES}: "
                f"{', '.join(missing)}; run scripts/gpu_suite.sh profiles on the GPU host",
                file=sys.stderr,
            )
            failed += 1
            continue
        out = run_dir(runs, name)
        seed_from_results(out, name, results)
        if (out / "run.json").exists():
            cmd = ["--resume", str(out)]
            if (out / "verdicts.jsonl").exists():  # verdicts handed back earlier continue their graphs
                cmd += ["--results", str(out / "verdicts.jsonl")]
        else:
            cmd = [*config.args, "--kernelbench-dir", str(kernelbench), "--backend", "cuda"]
            cmd += ["--evaluator", "deferred", "--out", str(out)]
        print(f"{name}: {config.what}", file=sys.stderr, flush=True)
        failed += subprocess.run([sys.executable, str(REPO / "run.py"), *cmd, "--no-live"]).returncode != 0
    return 1 if failed else 0


def gather_jobs(runs: Path, out: Path, names: list[str] | None = None) -> int:
    """One job file for the GPU host: each run's pending jobs, ids prefixed with the configuration.

    Each run's jobs.jsonl is first rewritten from its checkpoints (run.py --write-jobs), so the tasks a
    still-generating run has paused go out now rather than when its sweep ends. A job the run already
    holds a verdict for is left out.

    A candidate identical to one already in the file (same problem, text and settings: iterative
    refinement's greedy first round repeats zero-shot's) is evaluated once; its id is kept in
    runs/job_aliases.json, and `split_verdicts` hands the verdict to every copy. One identical to a
    candidate some run already holds a verdict for gets that verdict at once (in its run's verdicts.jsonl)
    and does not go out.
    """
    lines: list[dict] = []
    first: dict[str, str] = {}
    aliases = _aliases(runs)
    judged, reused = _judged(runs), 0
    for name in names or list(CONFIGS):
        if (run_dir(runs, name) / "run.json").exists():
            cmd = [sys.executable, str(REPO / "run.py"), "--resume", str(run_dir(runs, name)), "--write-jobs"]
            if subprocess.run(cmd).returncode != 0:
                print(f"{name}: its paused graphs could not be read; {name} is left out", file=sys.stderr)
                continue
        done = answered(run_dir(runs, name))
        for job in read_jsonl(run_dir(runs, name) / "jobs.jsonl"):
            if job["job_id"] in done:
                continue
            job_id = f"{name}{SEP}{job['job_id']}"
            same = _same(job)
            if same in judged:  # judged in an earlier round or run: its verdict, not another GPU run
                with (run_dir(runs, name) / "verdicts.jsonl").open("a", encoding="utf-8") as f:
                    f.write(json.dumps(judged[same] | {"job_id": job["job_id"]}) + "\n")
                reused += 1
                continue
            if same in first:
                copies = aliases.setdefault(first[same], [])
                if job_id not in copies:
                    copies.append(job_id)
                continue
            first[same] = job_id
            lines.append(job | {"job_id": job_id})
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(line) + "\n" for line in lines))
    record_sent(runs, lines)
    runs.mkdir(parents=True, exist_ok=True)
    (runs / ALIASES).write_text(json.dumps(aliases, indent=1))
    copies = sum(len(v) for k, v in aliases.items() if k in {line["job_id"] for line in lines})
    print(
        f"{len(lines)} jobs -> {out} ({copies} identical candidates share their verdicts; {reused} took the "
        "verdict of an identical candidate judged before)",
        file=sys.stderr,
    )
    return 0


def _same(job: dict) -> str:
    """What makes two jobs the same evaluation: the problem, the candidate's text and the settings."""
    text = json.dumps([job.get("problem"), job.get("candidate"), job.get("config")], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def record_sent(runs: Path, jobs: list[dict]) -> None:
    """Keep what each job sent to the GPU host was (runs/sent.jsonl: its id and `_same`): a run's own
    jobs.jsonl holds only its paused graphs' jobs, so a finished run no longer says what it judged."""
    runs.mkdir(parents=True, exist_ok=True)
    with (runs / SENT).open("a", encoding="utf-8") as f:
        f.writelines(json.dumps({"job_id": j["job_id"], "same": _same(j)}) + "\n" for j in jobs)


def _judged(runs: Path) -> dict[str, dict]:
    """Every verdict the runs hold for a job that was sent, by what was judged (`_same` of the job)."""
    verdicts = {
        f"{name}{SEP}{v['job_id']}": v
        for name in CONFIGS
        for v in read_jsonl(run_dir(runs, name) / "verdicts.jsonl")
        if "job_id" in v
    }
    out: dict[str, dict] = {}
    for sent in read_jsonl(runs / SENT):
        if sent["job_id"] in verdicts:
            out.setdefault(sent["same"], verdicts[sent["job_id"]])
    return out


def answered(run: Path) -> set[str]:
    """Job ids (the run's own) that the run's verdicts.jsonl already answers."""
    return {str(v["job_id"]) for v in read_jsonl(run / "verdicts.jsonl") if "job_id" in v}


def _aliases(runs: Path) -> dict[str, list[str]]:
    """{evaluated job id: [ids of identical candidates that take its verdict]} (runs/job_aliases.json)."""
    path = runs / ALIASES
    return json.loads(path.read_text()) if path.exists() else {}


def split_verdicts(verdicts: Path, runs: Path) -> dict[str, Path]:
    """Append the GPU host's verdicts to each run's verdicts.jsonl, with the run's own job ids."""
    aliases = _aliases(runs)
    by_config: dict[str, list[dict]] = {}
    for line in read_jsonl(verdicts):
        for full_id in [line.get("job_id", ""), *aliases.get(str(line.get("job_id", "")), [])]:
            name, sep, job_id = str(full_id).partition(SEP)
            if sep and name in CONFIGS:
                by_config.setdefault(name, []).append(line | {"job_id": job_id})
    kept = {}
    for name, lines in by_config.items():
        kept[name] = run_dir(runs, name) / "verdicts.jsonl"
        with kept[name].open("a", encoding="utf-8") as f:
            f.writelines(json.dumps(line) + "\n" for line in lines)
        print(f"{name}: {len(lines)} verdicts", file=sys.stderr, flush=True)
    return kept


def resume(verdicts: Path, runs: Path, kernelbench: Path, results: Path = RESULTS) -> int:
    """Hand the verdicts back and continue each run they belong to (its next round generates here)."""
    return generate(list(split_verdicts(verdicts, runs)), runs, kernelbench, results)


def status(runs: Path) -> int:
    """Per configuration: tasks finished, jobs waiting for the GPU host."""
    for name in CONFIGS:
        out = run_dir(runs, name)
        done = len(read_jsonl(out / "results.jsonl"))
        if not (out / "run.json").exists():
            print(f"{name:<22} {done:>3} finished, not started on this checkout")
            continue
        have = answered(out)
        jobs = [j["job_id"] for j in read_jsonl(out / "jobs.jsonl")]
        waiting = sum(j not in have for j in jobs)
        print(
            f"{name:<22} {done:>3} finished, {waiting:>3} jobs waiting for the GPU host, "
            f"{len(jobs) - waiting:>3} answered (generate continues them)"
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", default=str(REPO / "runs" / "paper"), help="where the run directories live")
    parser.add_argument("--kernelbench", default=str(KERNELBENCH))
    parser.add_argument(
        "--fresh",
        action="store_true",
        help=f"a rerun on today's pipeline: every task generated again, its finished tasks kept in {RERUN} "
        "instead of the paper's committed results (give it its own --runs folder)",
    )
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("generate", help="start or continue runs on this host (CPU)")
    p.add_argument("configs", nargs="*", help=f"default: all of {', '.join(CONFIGS)}")
    p = sub.add_parser("jobs", help="gather every paused run's jobs into one file")
    p.add_argument("configs", nargs="*", help=f"default: all of {', '.join(CONFIGS)}")
    p.add_argument("--out", required=True)
    p = sub.add_parser("resume", help="hand the GPU host's verdicts back and continue the runs")
    p.add_argument("verdicts")
    sub.add_parser("status", help="what is finished and what waits for the GPU host")
    p = sub.add_parser("report", help="the table and plots from the finished runs")
    p.add_argument("--out-dir", help=f"default: {RESULTS}, or {RERUN} with --fresh")
    args = parser.parse_args(argv)
    runs = Path(args.runs)
    committed = RERUN if args.fresh else RESULTS
    if unknown := [c for c in getattr(args, "configs", []) if c not in CONFIGS]:
        parser.error(f"unknown configuration {', '.join(unknown)}; known: {', '.join(CONFIGS)}")
    if args.cmd == "generate":
        return generate(list(args.configs) or list(CONFIGS), runs, Path(args.kernelbench), committed)
    if args.cmd == "jobs":
        return gather_jobs(runs, Path(args.out), list(args.configs))
    if args.cmd == "resume":
        return resume(Path(args.verdicts), runs, Path(args.kernelbench), committed)
    if args.cmd == "status":
        return status(runs)
    for name in CONFIGS:  # one not generated here keeps its committed tasks
        seed_from_results(run_dir(runs, name), name, committed)
    return write_report(runs, list(CONFIGS), Path(args.out_dir or committed))


if __name__ == "__main__":
    sys.exit(main())
