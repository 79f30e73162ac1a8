"""Evaluator throughput on the 30 real 1.5B completions (../shared/samples), on a GPU host.

Three measurements, each written to its own JSON as soon as it ends (so a run cut short keeps them):
- `cold`: all 30 through `evaluate_many` with an empty build cache (parallel builds, one run per GPU);
- `repeat`: the same 30 again on the now-warm cache: it must compile nothing;
- `serial`: N of them (every third, in problem order) through a plain serial loop: one process per
  candidate that compiles, then runs, with a fresh empty build directory each (nothing shared or cached).
- `regions`: the region kind (benchmarks/regions.py's jobs file, `--jobs`), cold: one NVRTC compile per
  candidate instead of an nvcc build; every verdict goes whole to `region_verdicts.jsonl` as well.
Then `--summarize` merges them into evaluator_throughput.json and a PNG.

    python -m benchmarks.evaluator_throughput --out-dir $OUT [--phases cold,repeat,serial]
    python -m benchmarks.evaluator_throughput --out-dir $OUT --phases regions --jobs JOBS.jsonl
    python -m benchmarks.evaluator_throughput --summarize --out-dir benchmarks/results
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from evaluator import device, sandbox
from evaluator.api import evaluate_many
from evaluator.config import EvalConfig
from evaluator.jobs import Job, parse_jobs
from evaluator.problem import load_problems

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"


def load_jobs(samples: Path, kernelbench: Path) -> list[Job]:
    problems = {(p.level, p.problem_id): p for p in load_problems(kernelbench)}
    jobs = []
    for f in samples.glob("level*_problem*.json"):
        data = json.loads(f.read_text())
        problem = problems[(data["level"], data["problem_id"])]
        jobs.append(Job(f"l{data['level']}_p{data['problem_id']:02d}", problem, data["completion"]))
    return sorted(jobs, key=lambda j: j.job_id)


def batch(
    jobs: list[Job], config: EvalConfig, label: str, out_dir: Path, verdicts: Path | None = None
) -> dict[str, Any]:
    """evaluate_many over all jobs; per-job rows stream to a JSONL file as they finish (and the whole
    verdicts, as `python -m evaluator run` writes them, to `verdicts` when given)."""
    (out_dir / f"evaluator_throughput_{label}.of").write_text(f"{len(jobs)}\n")  # for a batch cut short
    stream = open(out_dir / f"evaluator_throughput_{label}.jsonl", "w")  # noqa: SIM115
    whole = open(verdicts, "w") if verdicts else None  # noqa: SIM115
    t0 = time.perf_counter()

    def on_result(job_id: str, verdict: dict[str, Any]) -> None:
        ev = verdict["evidence"]
        error = (ev.get("error") or {}).get("message") or verdict["log_tail"][-300:]
        row = {
            "job_id": job_id,
            "verdict": verdict["verdict"],
            "kernelbench": verdict["verdict_kernelbench"],
            "seconds": ev.get("seconds"),
            "stage_seconds": ev.get("stage_seconds"),
            "compiles": _compiles(verdict),
            "error": error[-300:],
            "t": round(time.perf_counter() - t0, 2),
        }
        stream.write(json.dumps(row) + "\n")
        stream.flush()
        if whole is not None:
            whole.write(json.dumps({"job_id": job_id, **verdict}) + "\n")
            whole.flush()
        print(f"[{label}] {row['t']:7.1f}s {job_id}: {verdict['verdict']}", file=sys.stderr, flush=True)

    results = evaluate_many(jobs, config, on_result=on_result)
    wall = time.perf_counter() - t0
    stream.close()
    if whole is not None:
        whole.close()
    compiles = sum(_compiles(v) for v in results)
    stage, worker_stage = Counter(), Counter()
    for v in results:
        for k, s in (v["evidence"].get("seconds") or {}).items():
            stage[k] += s
        for k, s in (v["evidence"].get("stage_seconds") or {}).items():
            worker_stage[k] += s
    summary = {
        "label": label,
        "n": len(jobs),
        "wall_s": round(wall, 2),
        "candidates_per_min": round(60 * len(jobs) / wall, 2),
        "compiles": compiles,
        "build_processes": sum(
            1 for v in results if (v["evidence"].get("seconds") or {}).get("build", 0) > 0
        ),
        "verdicts": dict(Counter(v["verdict"] for v in results)),
        "verdicts_kernelbench": dict(Counter(v["verdict_kernelbench"] for v in results)),
        "stage_seconds_sum": {k: round(s, 2) for k, s in stage.items()},
        # inside the run workers: where a run's time goes (load includes the wait for a share of the device,
        # wait_device the wait to have it alone for profiling and timing)
        "worker_stage_seconds_sum": {k: round(s, 2) for k, s in worker_stage.items()},
        "per_job": {
            j.job_id: {
                "verdict": v["verdict"],
                "kernelbench": v["verdict_kernelbench"],
                "seconds": v["evidence"].get("seconds"),
                "speedup_eager": v["speedup_eager"],
                "custom_kernel_share": v["custom_kernel_share"],
            }
            for j, v in zip(jobs, results, strict=True)
        },
    }
    return summary


def _compiles(verdict: dict[str, Any]) -> int:
    """Extensions this evaluation actually compiled (not found in the cache), build phase and run phase."""
    ev = verdict["evidence"]
    ran_build = (ev.get("seconds") or {}).get("build", 0) > 0
    phase = [b for b in (ev.get("build_phase") or []) if not b.get("cached")] if ran_build else []
    run = [b for b in (ev.get("builds") or []) if not b.get("cached")] if ev.get("phase") == "run" else []
    return len(phase) + len(run)


def serial(
    jobs: list[Job], config: EvalConfig, n: int, deadline: float, out: Path, resume: Path | None = None
) -> dict[str, Any]:
    """The plain loop: per candidate one process that compiles (nothing cached) and then runs.

    `out` is rewritten after every candidate, so a run killed at the device's time limit keeps its rows;
    `resume` (such a file from an earlier call) continues it: its rows are kept and its wall time counted,
    which is sound because nothing is shared between the loop's candidates.
    """
    picked = jobs[::3][:n]
    rows: list[dict[str, Any]] = []
    prior_wall = 0.0
    if resume is not None:
        earlier = json.loads(resume.read_text())
        rows, prior_wall = list(earlier["rows"]), float(earlier["wall_s"])
    done = {r["job_id"] for r in rows}
    t0 = time.perf_counter()

    def report() -> dict[str, Any]:
        wall = prior_wall + time.perf_counter() - t0
        result = {
            "label": "serial",
            "n": len(rows),
            "planned": [j.job_id for j in picked],
            "wall_s": round(wall, 2),
            "candidates_per_min": round(60 * len(rows) / wall, 2) if rows else None,
            "rows": rows,
        }
        out.write_text(json.dumps(result, indent=1))
        return result

    for job in picked:
        if job.job_id in done:
            continue
        if time.perf_counter() > deadline:
            break
        fresh = tempfile.mkdtemp(prefix="kg_serial_cache_")
        cfg = config.replace(cache_dir=fresh)
        source = job.code
        t = time.perf_counter()
        verdict = "no_code"
        if source is not None:
            payload = {
                "candidate": source,
                "problem": job.problem.to_dict(),
                "config": cfg.to_dict(),
                "arch": device.arch_list(cfg.backend),
                "baseline_entry": None,
            }
            env = {"TORCH_CUDA_ARCH_LIST": device.arch_list(cfg.backend), "CUDA_VISIBLE_DEVICES": "0"}
            run = sandbox.run_worker("run", payload, cfg.compile_timeout_s + cfg.run_timeout_s, env)
            r = run.result or {}
            verdict = "timeout" if run.timed_out else r.get("verdict_kernelbench") or "runtime_error"
        rows.append(
            {
                "job_id": job.job_id,
                "seconds": round(time.perf_counter() - t, 2),
                "verdict_kernelbench": verdict,
            }
        )
        print(f"[serial] {job.job_id}: {verdict} in {rows[-1]['seconds']}s", file=sys.stderr, flush=True)
        shutil.rmtree(fresh, ignore_errors=True)
        report()
    return report()


def summarize(out_dir: Path) -> dict[str, Any]:
    parts = {}
    for label in ("cold", "repeat", "serial", "regions", "env"):
        p = out_dir / f"evaluator_throughput_{label}.json"
        stream = out_dir / f"evaluator_throughput_{label}.jsonl"
        if p.exists():
            parts[label] = json.loads(p.read_text())
        elif stream.exists():
            parts[label] = _cut_short(label, stream)
    return _merge(out_dir, parts)


def _cut_short(label: str, stream: Path) -> dict[str, Any]:
    """A batch killed at its call's time limit wrote no summary; its stream holds every verdict it reached
    and the time each came, which is its throughput so far."""
    rows = [json.loads(line) for line in stream.read_text().splitlines() if line.strip()]
    wall = max(r["t"] for r in rows)
    of = stream.with_suffix(".of")
    return {
        "label": label,
        "n": len(rows),
        "of": int(of.read_text()) if of.exists() else None,
        "partial": True,
        "wall_s": wall,
        "candidates_per_min": round(60 * len(rows) / wall, 2),
        "verdicts": dict(Counter(r["verdict"] for r in rows)),
        "verdicts_kernelbench": dict(Counter(r["kernelbench"] for r in rows)),
        "stage_seconds_sum": {
            k: round(sum((r.get("seconds") or {}).get(k, 0.0) for r in rows), 2)
            for k in ("build", "run", "load_and_wait", "total")
        },
    }


def _merge(out_dir: Path, parts: dict[str, Any]) -> dict[str, Any]:
    summary: dict[str, Any] = {**parts}
    if "cold" in parts and parts.get("serial", {}).get("candidates_per_min"):
        summary["batch_over_serial"] = round(
            parts["cold"]["candidates_per_min"] / parts["serial"]["candidates_per_min"], 2
        )
    if "regions" in parts and parts.get("cold", {}).get("candidates_per_min"):
        summary["regions_over_cold"] = round(
            parts["regions"]["candidates_per_min"] / parts["cold"]["candidates_per_min"], 2
        )
    if "repeat" in parts and parts.get("serial", {}).get("candidates_per_min"):
        summary["repeat_over_serial"] = round(
            parts["repeat"]["candidates_per_min"] / parts["serial"]["candidates_per_min"], 2
        )
    (out_dir / "evaluator_throughput.json").write_text(json.dumps(summary, indent=1) + "\n")
    _plot(summary, out_dir / "evaluator_throughput.png")
    return summary


def _plot(summary: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels, values = [], []
    for key, name in (
        ("serial", "plain serial loop"),
        ("cold", "batch, empty cache"),
        ("repeat", "batch, warm cache"),
        ("regions", "region kind (NVRTC),\nempty cache"),
    ):
        if summary.get(key, {}).get("candidates_per_min"):
            partial = f" of {summary[key].get('of', '?')}, cut short" if summary[key].get("partial") else ""
            labels.append(f"{name}\n(n={summary[key]['n']}{partial})")
            values.append(summary[key]["candidates_per_min"])
    fig, ax = plt.subplots(figsize=(7, 4))
    bars = ax.bar(labels, values, color=["#999999", "#1f77b4", "#2ca02c", "#d62728"][: len(values)])
    ax.bar_label(bars, fmt="%.1f")
    gpu = summary.get("env", {}).get("gpu", "")
    ax.set_ylabel("candidates per minute")
    ax.set_title(f"Evaluator throughput: whole programs (30 real 1.5B completions) and regions ({gpu})")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--samples", default=str(SHARED / "samples" / "qwen2.5-coder-1.5b-kernelbench-oneshot")
    )
    parser.add_argument("--kernelbench", default=str(SHARED / "kernelbench"))
    parser.add_argument("--out-dir", default=str(REPO / "benchmarks" / "results"))
    parser.add_argument("--cache-dir", default=None)
    parser.add_argument("--phases", default="cold,repeat,serial")
    parser.add_argument("--jobs", type=Path, help="a job file for the `regions` phase")
    parser.add_argument("--serial", type=int, default=10)
    parser.add_argument("--serial-resume", help="an earlier evaluator_throughput_serial.json to continue")
    parser.add_argument(
        "--budget-s", type=float, default=560.0, help="stop starting serial candidates after this"
    )
    parser.add_argument("--config", default="{}", help="JSON EvalConfig overrides")
    parser.add_argument("--summarize", action="store_true")
    args = parser.parse_args(argv)
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if args.summarize:
        print(
            json.dumps(
                {
                    k: v
                    for k, v in summarize(out_dir).items()
                    if k in ("batch_over_serial", "repeat_over_serial", "regions_over_cold")
                }
            )
        )
        return 0
    start = time.perf_counter()
    cache = Path(args.cache_dir or tempfile.mkdtemp(prefix="kg_throughput_"))
    config = EvalConfig(cache_dir=str(cache)).replace(**json.loads(args.config))
    jobs = load_jobs(Path(args.samples), Path(args.kernelbench))
    import torch

    env = {
        "gpu": device.gpu_name(config.backend),
        "torch": torch.__version__,
        "cpus": __import__("os").cpu_count(),
        "compile_workers": config.effective_compile_workers(),
        "build_jobs": config.build_jobs,
        "config": config.to_dict(),
    }
    (out_dir / "evaluator_throughput_env.json").write_text(json.dumps(env, indent=1))
    phases = args.phases.split(",")
    if "cold" in phases:
        shutil.rmtree(cache, ignore_errors=True)
        cache.mkdir(parents=True)
        (out_dir / "evaluator_throughput_cold.json").write_text(
            json.dumps(batch(jobs, config, "cold", out_dir), indent=1)
        )
    if "repeat" in phases:
        (out_dir / "evaluator_throughput_repeat.json").write_text(
            json.dumps(batch(jobs, config, "repeat", out_dir), indent=1)
        )
    if "regions" in phases:
        region_jobs, errors = parse_jobs(args.jobs, config)
        if errors or not region_jobs:
            print(f"bad job lines in {args.jobs}: {errors}", file=sys.stderr)
            return 2
        shutil.rmtree(cache, ignore_errors=True)
        cache.mkdir(parents=True)
        summary = batch(region_jobs, config, "regions", out_dir, out_dir / "region_verdicts.jsonl")
        summary["env"] = env
        (out_dir / "evaluator_throughput_regions.json").write_text(json.dumps(summary, indent=1))
    if "serial" in phases:
        serial(
            jobs,
            config,
            args.serial,
            start + args.budget_s,
            out_dir / "evaluator_throughput_serial.json",
            Path(args.serial_resume) if args.serial_resume else None,
        )
    if set(phases) - {"regions"}:
        summarize(out_dir)  # merged and plotted on the project host (a GPU host may lack matplotlib)
    return 0


if __name__ == "__main__":
    sys.exit(main())
