"""Re-validate every corpus example through the evaluator's strict check and record the timing.

On a GPU host (needs torch, nvcc and the project's `evaluator`, not chromadb):
    python -m retrieval_corpus.validate run --out DIR [--ids a b ...]
writes DIR/results.jsonl (one evaluator verdict per example, as each finishes) and DIR/summary.txt, and
updates each meta.json there. Where the run happened on another machine (the `device` tool), copy the
measurements back with
    python -m retrieval_corpus.validate apply DIR/results.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from retrieval_corpus.corpus import Example, examples_dir, load_examples


def measured_from_verdict(verdict: dict[str, Any], torch_version: str) -> dict[str, Any]:
    """The meta.json `measured` record: verdict always, timings only when the run got that far."""
    timing = (verdict.get("evidence") or {}).get("timing") or {}
    eager = (timing.get("reference_eager") or {}).get("ms")
    candidate = (timing.get("candidate") or {}).get("ms")
    speedup = verdict.get("speedup_eager")
    return {
        "gpu": (verdict.get("evidence") or {}).get("gpu"),
        "torch": torch_version,
        "speedup_eager": round(speedup, 4) if speedup is not None else None,
        "ms_eager": round(eager, 5) if eager is not None else None,
        "ms_candidate": round(candidate, 5) if candidate is not None else None,
        "verdict": verdict.get("verdict"),
    }


def write_measured(example_dir: Path, measured: dict[str, Any]) -> None:
    """Replace `measured` in one meta.json, keeping the other keys and their order."""
    path = example_dir / "meta.json"
    meta = json.loads(path.read_text())
    meta["measured"] = measured
    path.write_text(json.dumps(meta, indent=2) + "\n")


def _summary_line(example: Example, verdict: dict[str, Any]) -> str:
    m = measured_from_verdict(verdict, "")
    timing = (
        f"{m['ms_eager']:.4f} ms eager, {m['ms_candidate']:.4f} ms kernel, {m['speedup_eager']:.2f}x"
        if m["speedup_eager"] is not None and m["ms_eager"] is not None and m["ms_candidate"] is not None
        else "no timing"
    )
    failures = (verdict.get("evidence") or {}).get("strict_failures") or []
    extra = f" strict_failures={failures}" if failures else ""
    return f"{example.id:48s} {m['verdict']:14s} {timing}{extra}"


def run(
    out_dir: Path,
    ids: list[str] | None,
    timing_trials: int,
    compile_workers: int,
    build_jobs: int,
    write_meta: bool = True,
) -> int:
    """Evaluate the examples (builds in parallel, runs one per GPU) and record results as they arrive."""
    import torch

    from evaluator.api import EvalConfig, evaluate_many
    from evaluator.jobs import Job
    from evaluator.problem import problem_from_source

    examples = {e.id: e for e in load_examples()}
    chosen = [examples[i] for i in ids] if ids else list(examples.values())
    config = EvalConfig(
        backend="cuda",
        reference_compile="off",  # the corpus records the eager speedup; torch.compile would double the run
        timing_trials=timing_trials,
        compile_workers=compile_workers,
        build_jobs=build_jobs,
    )
    jobs = [
        Job(e.id, problem_from_source(e.reference, name=e.id), e.solution, None) for e in chosen
    ]
    out_dir.mkdir(parents=True, exist_ok=True)
    results_path = out_dir / "results.jsonl"
    lines: list[str] = []
    t0 = time.perf_counter()

    def on_result(job_id: str, verdict: dict[str, Any]) -> None:
        with results_path.open("a") as fh:
            fh.write(json.dumps({"job_id": job_id, "torch": torch.__version__, **verdict}) + "\n")
        line = _summary_line(examples[job_id], verdict)
        lines.append(line)
        print(f"[{len(lines):3d}/{len(jobs)} {time.perf_counter() - t0:6.1f}s] {line}", flush=True)
        if verdict.get("verdict") != "correct":
            print("      " + (verdict.get("log_tail") or "")[-400:].replace("\n", "\n      "), flush=True)

    verdicts = evaluate_many(jobs, config, on_result=on_result)
    correct = sum(v.get("verdict") == "correct" for v in verdicts)
    if write_meta:
        for example, verdict in zip(chosen, verdicts, strict=True):
            write_measured(example.path, measured_from_verdict(verdict, torch.__version__))
    gpu = next((g for v in verdicts if (g := (v.get("evidence") or {}).get("gpu"))), "unknown GPU")
    header = f"{correct}/{len(chosen)} correct (strict) on {gpu}, torch {torch.__version__}"
    (out_dir / "summary.txt").write_text(header + "\n" + "\n".join(sorted(lines)) + "\n")
    print(header, flush=True)
    return 0 if correct == len(chosen) else 1


def apply(results: Path, root: Path | None = None) -> int:
    """Copy the measurements of a results.jsonl (from a device run) into the local meta.json files."""
    base = root or examples_dir()
    count = 0
    for line in results.read_text().splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        example_dir = base / record["job_id"]
        if not (example_dir / "meta.json").is_file():
            print(f"skipped {record['job_id']}: no such example", file=sys.stderr)
            continue
        write_measured(example_dir, measured_from_verdict(record, record.get("torch", "unknown")))
        count += 1
    print(f"recorded {count} measurements")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m retrieval_corpus.validate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="evaluate the examples on this host's GPU")
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--ids", nargs="*", default=None)
    r.add_argument("--timing-trials", type=int, default=30)
    r.add_argument("--compile-workers", type=int, default=0, help="0: the evaluator's default")
    r.add_argument("--build-jobs", type=int, default=2)
    r.add_argument("--no-write-meta", action="store_true", help="leave meta.json untouched")
    a = sub.add_parser("apply", help="write the measurements of a results.jsonl into meta.json")
    a.add_argument("results", type=Path)
    args = parser.parse_args(argv)
    if args.cmd == "run":
        write_meta = not args.no_write_meta
        return run(args.out, args.ids, args.timing_trials, args.compile_workers, args.build_jobs, write_meta)
    return apply(args.results)


if __name__ == "__main__":
    raise SystemExit(main())
