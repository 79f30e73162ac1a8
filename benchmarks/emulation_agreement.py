"""`python -m benchmarks.emulation_agreement RUN [RUN ...]`: does the CPU emulation foresee the GPU's verdict?

The graph's local checks run each region body on the CPU on the problem shrunk (regions.emulate) and send
a body that computes wrong values back for repair. That is worth its seconds only if the emulation agrees
with the strict verdict of the GPU host. This replays every judged region candidate of finished runs
(their checkpoints keep each candidate's bodies, and its verdict where the run was resumed with it; a
verdict file gives those of jobs left pending): each body is emulated on its region's small
twin, and the candidate's CPU verdict (every emulated region right) is set beside the GPU's strict one.
A "false alarm" (the CPU says wrong, the GPU says correct) is the costly kind: a local repair would replace
a right body. Bodies on a launch shape (threads that cooperate) and regions without a small twin are not
emulated; a candidate with none emulated is counted apart.

Writes benchmarks/results/emulation_agreement.json (counts per run and overall) and a .jsonl beside it
(one line per candidate).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from graph.runner.deferred import SEPARATOR
from graph.runner.jsonl import JsonlLog, read_jsonl

OUT = Path(__file__).resolve().parent / "results" / "emulation_agreement.json"


def final_states(run: Path) -> list[tuple[str, dict[str, Any]]]:
    """(thread id, its latest state) for each thread of a run directory's checkpoint database (read only)."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(f"file:{run / 'checkpoints.sqlite'}?mode=ro", uri=True, check_same_thread=False)
    try:
        saver = SqliteSaver(conn)
        threads = [row[0] for row in conn.execute("SELECT DISTINCT thread_id FROM checkpoints")]
        states = []
        for thread in sorted(threads):
            got = saver.get_tuple({"configurable": {"thread_id": thread, "checkpoint_ns": ""}})
            if got is not None:
                states.append((thread, got.checkpoint["channel_values"]))
        return states
    finally:
        conn.close()


def cpu_verdict(source: str, ambition: str, candidate: dict[str, Any]) -> dict[str, Any]:
    """The candidate's bodies emulated on their regions' twins and judged as the graph's local checks
    judge them (regions.emulate.wrong_on_cpu): right, wrong (with the first wrong region and where), or
    not emulated."""
    from regions.emulate import small_twin, wrong_on_cpu
    from regions.offering import offered

    regions = {region.id: region for region, _ in offered(source, ambition)[0]}
    emulated, first_wrong = 0, None
    for rid, body in (candidate.get("bodies") or {}).items():
        region = regions.get(rid)
        if region is None or (candidate.get("shapes") or {}).get(rid) or not body.strip():
            continue
        twin = small_twin(source, region, ambition)
        wrong = None if twin is None else wrong_on_cpu(twin, body)  # the graph's own rule
        if wrong is None:
            continue
        emulated += 1
        if wrong and first_wrong is None:
            first_wrong = f"{rid}: {wrong}"
    if not emulated:
        return {"cpu": "not emulated"}
    return {"cpu": "wrong" if first_wrong else "right", "cpu_error": first_wrong}


def judged(
    thread: str, state: dict[str, Any], verdicts: dict[str, dict[str, Any]]
) -> list[tuple[dict[str, Any], str]]:
    """The thread's region candidates the GPU judged itself (not a verdict reused for a repeated program),
    with its strict word, correct or wrong: those resumed into the state, and those still pending whose job
    (`<thread>|<task>/<candidate>`) a verdict file holds. Compile errors are left out: NVRTC tells those
    apart here."""
    out = []
    name = (state.get("task") or {}).get("name")
    done = state.get("candidates") or []
    pending = [c for c in state.get("pending") or [] if c["id"] not in {d["id"] for d in done}]
    for candidate in [*done, *pending]:
        job = f"{thread}{SEPARATOR}{name}/{candidate['id']}"
        verdict = candidate.get("verdict") or verdicts.get(job) or {}
        if candidate.get("format") != "regions" or not verdict or verdict.get("reused_verdict_of"):
            continue
        if verdict.get("verdict") != "compile_error":
            strict = verdict.get("correct_strict", verdict.get("verdict") == "correct")
            out.append((candidate | {"verdict": verdict}, "correct" if strict else "wrong"))
    return out


def replay(runs: list[tuple[Path, dict[str, dict[str, Any]]]], jsonl: Path) -> dict[str, Any]:
    log = JsonlLog(jsonl)
    per_run: dict[str, Counter[str]] = {}
    try:
        for run, verdicts in runs:
            settings = json.loads((run / "run.json").read_text())
            ambition = (settings.get("context_fields") or {}).get("ambition", "moderate")
            counts: Counter[str] = Counter()
            for thread, state in final_states(run):
                task = state.get("task") or {}
                for candidate, gpu in judged(thread, state, verdicts):
                    try:
                        cpu = cpu_verdict(task["source"], candidate.get("ambition") or ambition, candidate)
                    except Exception as exc:  # a task region mode cannot trace here is not this question
                        cpu = {"cpu": "not emulated", "cpu_error": f"{type(exc).__name__}: {exc}"}
                    key = "not emulated" if cpu["cpu"] == "not emulated" else f"cpu {cpu['cpu']}, gpu {gpu}"
                    counts[key] += 1
                    where = {"run": run.name, "task": task.get("name"), "candidate": candidate["id"]}
                    log.write(where | {"gpu": gpu, "gpu_verdict": candidate["verdict"].get("verdict")} | cpu)
                    print(f"{run.name} {task.get('name')} {candidate['id']}: {key}", flush=True)
            per_run[run.name] = counts
    finally:
        log.close()
    total: Counter[str] = sum(per_run.values(), Counter())
    emulated = sum(v for k, v in total.items() if k != "not emulated")
    agree = total["cpu right, gpu correct"] + total["cpu wrong, gpu wrong"]
    return {
        "runs": {name: dict(c) for name, c in per_run.items()},
        "total": dict(total),
        "agreement": round(agree / emulated, 3) if emulated else None,
        "false_alarms": total["cpu wrong, gpu correct"],
        "emulated": emulated,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.emulation_agreement", description=__doc__)
    parser.add_argument(
        "runs",
        nargs="+",
        help="run directories, each as DIR or DIR=VERDICTS[,VERDICTS]: the verdict files of jobs it left "
        "pending (job ids repeat across runs of one strategy and task, so each file names its run)",
    )
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    jsonl = args.out.with_suffix(".jsonl")
    jsonl.unlink(missing_ok=True)
    runs = []
    for item in args.runs:
        run, _, files = item.partition("=")
        verdicts = {row["job_id"]: row for f in files.split(",") if f for row in read_jsonl(Path(f))}
        runs.append((Path(run), verdicts))
    summary = replay(runs, jsonl)
    args.out.write_text(json.dumps(summary, indent=1) + "\n")
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
