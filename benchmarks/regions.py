"""The region kind, end to end on this host: one region per shared problem written by the embedded model.

For each problem the framework traces the reference, offers one region (conservative ambition: the
costliest map or reduce region, or the op itself where the task is a single op) and renders its contract;
the model writes the body, sample 0 greedy and the others at a cooler temperature, each with up to two
local repair rounds (lint + NVRTC + the CPU emulation; results made before 2026-12-05 had lint + NVRTC
only). What this measures without a GPU: how many problems get a contract, how many bodies pass the local
checks and compute the right values when the kernel is emulated on the CPU on the problem shrunk (n = 1
and best-of-n), tokens and seconds per sample. The strict verdict needs the GPU host; the samples file
keeps every body for it.

    python -m benchmarks.regions generate [--samples 4]   # resumable, into benchmarks/results/regions/
    python -m benchmarks.regions jobs --jobs JOBS.jsonl [--launcher nvrtc|load_inline]   # one job a sample
    python -m evaluator run JOBS.jsonl --out VERDICTS.jsonl   # on the GPU host (scripts/gpu_suite.sh regions)
    python -m benchmarks.regions report [--verdicts VERDICTS.jsonl]   # benchmarks/results/regions.json + .png
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graph.runner.jsonl import JsonlLog, read_jsonl

if TYPE_CHECKING:
    from evaluator.problem import Problem
    from regions.contract import Contract
    from regions.export import Launcher, Written
    from regions.model import Region

REPO = Path(__file__).resolve().parent.parent
KERNELBENCH = REPO.parent / "shared" / "kernelbench"
RESULTS = REPO / "benchmarks" / "results"
RUNS = RESULTS / "regions"  # the raw samples are results: committed, so a GPU host can judge them later
SAMPLE_TEMPERATURE = 0.5  # samples after the greedy one: cooler than whole programs' 0.7-0.8


def offered_region(problem: Problem) -> tuple[Region, Contract]:
    """(region, contract) of the problem's one region at the conservative ambition, offered as the graph
    offers it (regions.offering); raises RegionError with the reason."""
    from regions.offering import offered

    return offered(problem.source, "conservative")[0][0]


def judged_on(verdicts: list[dict[str, Any]]) -> str:
    """The GPU the verdicts' evidence names (the first that names one), for a report's heading."""
    return next((v["evidence"]["gpu"] for v in verdicts if (v.get("evidence") or {}).get("gpu")), "?")


def region_job(
    job_id: str, problem: Problem, written: list[Written], launcher: Launcher = "nvrtc"
) -> dict[str, Any]:
    """The job line of the program the framework assembles around the written bodies, as the graph sends
    it: the program is the candidate, already extracted, with the region markers of the region kind."""
    from evaluator.jobs import job_line
    from evaluator.problem import problem_to_dict
    from regions.assemble import assemble

    built = assemble(problem_to_dict(problem), written, launcher)
    program = built["code"]
    return job_line(
        job_id, problem, f"```python\n{program}```", code=program, extracted=True, regions=built["regions"]
    )


def generate(kernelbench: Path, out: Path, samples: int) -> int:
    from evaluator.problem import load_problems
    from nodes.region_writer import write_region
    from regions.emulate import emulate, small_twin
    from regions.model import RegionError

    path = out / "samples.jsonl"
    done = {(r["problem"], r["sample"]) for r in read_jsonl(path)}
    log = JsonlLog(path)  # each sample fsynced as it is written, and a line cut by a kill cut off: resumable
    try:
        for problem in load_problems(kernelbench):
            todo = [s for s in range(samples) if (problem.key, s) not in done]
            if not todo:
                continue
            base = {
                "problem": problem.key,
                "name": problem.name,
                "level": problem.level,
                "id": problem.problem_id,
            }
            try:
                region, contract = offered_region(problem)
            except RegionError as exc:
                log.write(base | {"sample": 0, "contract": False, "reason": str(exc)})
                continue
            base |= {
                "contract": True,
                "region": region.id,
                "kind": region.kind,
                "targets": [s.target for s in region.steps],
                "launch": contract.launch,
            }
            small = small_twin(problem.source, region)
            for s in todo:
                temperature = 0.0 if s == 0 else SAMPLE_TEMPERATURE
                seed = problem.problem_id * 100 + s
                attempt = write_region(contract, temperature=temperature, seed=seed, twin=small)
                emulated = emulate(*small, attempt.body) if attempt.ok and small else None
                row = base | {"sample": s, "temperature": temperature} | attempt.to_dict()
                row |= {"emulated": emulated and emulated.ok, "emulation": emulated and emulated.error}
                log.write(row)
                print(
                    f"{problem.key} sample {s}: {'ok' if attempt.ok else 'FAILED'} after {attempt.rounds} "
                    f"answer(s), {attempt.completion_tokens} tokens, {attempt.seconds:.0f} s",
                    flush=True,
                )
    finally:
        log.close()
    return 0


def write_jobs(
    kernelbench: Path, out: Path, jobs_path: Path, launcher: Launcher = "nvrtc", greedy_only: bool = False
) -> int:
    """Each sample's kernel as a program, one evaluator job line per sample (samples that failed the local
    checks too: they count as failures only once a GPU says so). `nvrtc`: the evaluator's region kind
    (with the per-region check); `load_inline`: the standalone KernelBench program any harness can judge."""
    from evaluator.problem import load_problems
    from regions.export import Written

    problems = {p.key: p for p in load_problems(kernelbench)}
    lines = []
    for row in read_jsonl(out / "samples.jsonl"):
        if not row.get("contract") or (greedy_only and row["sample"] != 0):
            continue
        problem = problems[row["problem"]]
        region, contract = offered_region(problem)
        lines.append(region_job(_job_id(row), problem, [Written(region, contract, row["body"])], launcher))
    jobs_path.parent.mkdir(parents=True, exist_ok=True)
    jobs_path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    print(f"{len(lines)} jobs -> {jobs_path}", file=sys.stderr)
    return 0


def _job_id(row: dict[str, Any]) -> str:
    return f"{row['problem']}/s{row['sample']}"


def summarise(
    rows: list[dict[str, Any]],
    verdicts: dict[str, dict[str, Any]] | None = None,
    exported: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Per level and overall: contracts, local pass at n = 1 and best-of-n, tokens and seconds; with the
    GPU host's verdicts of the region kind, strict and KernelBench-compatible correct at n = 1 and
    best-of-n, the per-region check, faster than eager and the geometric-mean speedups of the greedy
    correct kernels; with `exported` (the same kernels as KernelBench programs), their strict count."""
    by_problem: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_problem.setdefault(r["problem"], []).append(r)
    levels: dict[str, dict[str, Any]] = {}
    for _, samples in sorted(by_problem.items()):
        for level in (str(samples[0]["level"]), "all"):
            g = levels.setdefault(
                level,
                {
                    "problems": 0,
                    "contracts": 0,
                    "local_ok_n1": 0,
                    "local_ok_any": 0,
                    "samples": 0,
                    "emulated_n1": 0,
                    "emulated_any": 0,
                    "judged_n1": 0,  # problems whose greedy sample has a GPU verdict
                    "judged_all": 0,  # problems all of whose samples have one (best-of-n counts these)
                    "strict_n1": 0,
                    "strict_any": 0,
                    "kernelbench_n1": 0,
                    "region_check_n1": 0,
                    "fast_n1": 0,
                    "speedups_eager": [],
                    "speedups_compile": [],
                    "exported_judged": 0,
                    "exported_strict_n1": 0,
                    "tokens": 0,
                    "seconds": 0.0,
                    "answers": 0,
                },
            )
            g["problems"] += 1
            written = [s for s in samples if s.get("contract")]
            if not written:
                continue
            g["contracts"] += 1
            greedy = next((s for s in written if s["sample"] == 0), None)
            g["local_ok_n1"] += bool(greedy and greedy["ok"])
            g["local_ok_any"] += any(s["ok"] for s in written)
            g["emulated_n1"] += bool(greedy and greedy.get("emulated"))
            g["emulated_any"] += any(s.get("emulated") for s in written)
            g["samples"] += len(written)
            g["tokens"] += sum(s["completion_tokens"] for s in written)
            g["seconds"] += sum(s["seconds"] for s in written)
            g["answers"] += sum(s["rounds"] for s in written)
            judged = [(verdicts or {}).get(_job_id(s)) for s in written]
            first = (verdicts or {}).get(_job_id(greedy)) if greedy else None
            if first:
                g["judged_n1"] += 1
                _count_greedy(g, first)
            if all(judged):
                g["judged_all"] += 1
                g["strict_any"] += any(v.get("correct_strict") for v in judged if v)
            if greedy and (exported or {}).get(_job_id(greedy)):
                g["exported_judged"] += 1
                g["exported_strict_n1"] += bool(exported[_job_id(greedy)].get("correct_strict"))  # type: ignore[index]
    for g in levels.values():
        n = max(g["samples"], 1)
        g.update(
            tokens_per_sample=round(g.pop("tokens") / n, 1),
            seconds_per_sample=round(g.pop("seconds") / n, 1),
            answers_per_sample=round(g.pop("answers") / n, 2),
            geomean_speedup_eager=_geomean(g.pop("speedups_eager")),
            geomean_speedup_compile=_geomean(g.pop("speedups_compile")),
        )
    return levels


def _count_greedy(g: dict[str, Any], verdict: dict[str, Any]) -> None:
    """The greedy sample's GPU facts: what n = 1 means."""
    strict = bool(verdict.get("correct_strict"))
    g["strict_n1"] += strict
    g["kernelbench_n1"] += bool(verdict.get("correct_kernelbench"))
    g["region_check_n1"] += _region_checks(verdict) == "correct"
    if strict and verdict.get("speedup_eager"):
        g["fast_n1"] += verdict["speedup_eager"] > 1.0
        g["speedups_eager"].append(verdict["speedup_eager"])
    if strict and verdict.get("speedup_compile"):
        g["speedups_compile"].append(verdict["speedup_compile"])


def _region_checks(verdict: dict[str, Any]) -> str | None:
    """ "correct" when every region's own check passed, else the first other verdict (None: none ran)."""
    checks = [r.get("verdict") for r in (verdict.get("evidence") or {}).get("regions") or []]
    return next((c for c in checks if c != "correct"), "correct") if checks else None


def _geomean(values: list[float]) -> float | None:
    return round(math.exp(sum(math.log(v) for v in values) / len(values)), 3) if values else None


def report(
    out: Path, results: Path, verdicts_path: Path | None = None, exported_path: Path | None = None
) -> int:
    rows = read_jsonl(out / "samples.jsonl")
    if not rows:
        print(f"no samples under {out} yet", file=sys.stderr)
        return 1
    verdicts = {v["job_id"]: v for v in read_jsonl(verdicts_path)} if verdicts_path else None
    exported = {v["job_id"]: v for v in read_jsonl(exported_path)} if exported_path else None
    levels = summarise(rows, verdicts, exported)
    failures = [
        {
            "problem": r["problem"],
            "reason": r.get("reason") or r.get("errors", "")[:300] or r.get("emulation"),
        }
        for r in rows
        if not r.get("contract") or (r["sample"] == 0 and not (r["ok"] and r.get("emulated")))
    ]
    judged = bool(verdicts) and levels["all"]["judged_n1"] > 0
    summary = {
        "what": "one conservative region per shared problem, written by the embedded model: local checks "
        "(lint + NVRTC) and values from a CPU emulation of the kernel on the problem shrunk, here; strict "
        "verdicts from the GPU host's evaluator on the region kind (NVRTC), and on the same kernels "
        "exported as KernelBench programs (load_inline) where `exported` is given"
        + ("" if judged else " (not judged yet: strict_gpu is null)"),
        "machine": f"{platform.node()} ({platform.machine()}), CPU only",
        "model": _model_name(),
        "samples_per_problem": max(r["sample"] for r in rows) + 1,
        "levels": levels,
        "failures_at_n1": failures,
        "strict_gpu": _gpu_facts(verdicts) if judged else None,
        "greedy": _greedy_table(rows, verdicts, exported) if judged else None,
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    results.mkdir(parents=True, exist_ok=True)
    (results / "regions.json").write_text(json.dumps(summary, indent=1))
    _plot(levels, results / "regions.png")
    print(json.dumps(levels, indent=1))
    return 0


def _greedy_table(
    rows: list[dict[str, Any]],
    verdicts: dict[str, dict[str, Any]] | None,
    exported: dict[str, dict[str, Any]] | None,
) -> dict[str, dict[str, Any]]:
    """Per problem, what the GPU said of the greedy kernel (null: not judged): n = 1 at a glance."""
    table = {}
    for r in sorted(rows, key=lambda r: r["problem"]):
        if r["sample"] != 0 or not r.get("contract"):
            continue
        v = (verdicts or {}).get(_job_id(r))
        e = (exported or {}).get(_job_id(r))
        table[r["problem"]] = {
            "region_kind": v and v["verdict"],
            "kernelbench": v and v["verdict_kernelbench"],
            "region_check": v and _region_checks(v),
            "strict_failures": v and (v.get("evidence") or {}).get("strict_failures"),
            "speedup_eager": v and v.get("speedup_eager") and round(v["speedup_eager"], 3),
            "custom_kernel_share": v and v.get("custom_kernel_share"),
            "exported": e and e["verdict"],
        }
    return table


def _gpu_facts(verdicts: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Where and how the strict verdicts were measured, as the verdicts recorded it."""
    evidence = [v.get("evidence") or {} for v in verdicts.values()]
    speedups = sorted(
        v["speedup_eager"] for v in verdicts.values() if v.get("correct_strict") and v.get("speedup_eager")
    )
    return {
        "gpu": sorted({e["gpu"] for e in evidence if e.get("gpu")}),
        "torch": sorted({e["torch"] for e in evidence if e.get("torch")}),
        "verdicts": {
            k: sum(v["verdict"] == k for v in verdicts.values())
            for k in sorted({v["verdict"] for v in verdicts.values()})
        },
        "speedup_eager_of_correct": speedups,
    }


def _plot(levels: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = sorted(levels, key=lambda k: (k == "all", k))
    series = [
        ("contracts", "contract offered"),
        ("local_ok_n1", "local checks pass, n = 1"),
        ("local_ok_any", "local checks pass, best-of-n"),
        ("emulated_n1", "right values, CPU emulation, n = 1"),
        ("emulated_any", "right values, CPU emulation, best-of-n"),
    ]
    judged = levels["all"]["judged_n1"] > 0
    if judged:
        series += [
            ("strict_n1", "strictly correct on the GPU, n = 1"),
            ("strict_any", "strictly correct, best-of-n"),
        ]
    width = 0.8 / len(series)
    fig, ax = plt.subplots(figsize=(10, 3.8))
    for offset, (field, label) in enumerate(series):
        ax.bar(
            [i + width * (offset - (len(series) - 1) / 2) for i in range(len(names))],
            [100 * levels[n][field] / levels[n]["problems"] for n in names],
            width,
            label=label,
        )
    ax.set_xticks(range(len(names)), [f"level {n}" if n != "all" else "all" for n in names])
    ax.set_ylabel("% of problems")
    ax.set_title(
        "Region contracts, embedded model" + ("" if judged else " (local checks; GPU verdicts pending)")
    )
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _model_name() -> str:
    try:
        from nodes.model.llm import model_info

        info = model_info()
        return f"{info.get('name') or '?'} {info.get('quantisation') or ''}".strip()
    except Exception as exc:  # noqa: BLE001 - the report still stands without the model's name
        return f"unknown ({type(exc).__name__})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=RUNS)
    sub = parser.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate")
    g.add_argument("--kernelbench", type=Path, default=KERNELBENCH)
    g.add_argument("--samples", type=int, default=1)
    j = sub.add_parser("jobs")
    j.add_argument("--kernelbench", type=Path, default=KERNELBENCH)
    j.add_argument("--jobs", type=Path, required=True)
    j.add_argument("--launcher", choices=("nvrtc", "load_inline"), default="nvrtc")
    j.add_argument("--greedy-only", action="store_true", help="only sample 0 of each problem (n = 1)")
    r = sub.add_parser("report")
    r.add_argument("--results", type=Path, default=RESULTS)
    r.add_argument("--verdicts", type=Path, default=None, help="the GPU host's verdicts of `jobs`")
    r.add_argument(
        "--exported", type=Path, default=None, help="verdicts of `jobs --launcher load_inline` (optional)"
    )
    args = parser.parse_args(argv)
    if args.cmd == "generate":
        return generate(args.kernelbench, args.out, args.samples)
    if args.cmd == "jobs":
        return write_jobs(args.kernelbench, args.out, args.jobs, args.launcher, args.greedy_only)
    return report(args.out, args.results, args.verdicts, args.exported)


if __name__ == "__main__":
    sys.exit(main())
