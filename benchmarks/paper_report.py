"""The paper's table and plots from the experiment's run directories (see benchmarks.kernelbench_paper).

Correct means the evaluator's strict verdict; the KernelBench-compatible rate is shown beside it. fast_1
is the share of tasks with a strictly correct kernel faster than eager. Speedups are geometric means over
strictly correct kernels. A KernelBench-correct kernel whose GPU time is not in custom kernels is counted
apart. Best-of-n uses the unbiased estimator over the n=8 runs' candidates: 1 - C(n-c, k) / C(n, k) per task,
for strict correctness, KernelBench's, KernelBench's with custom work, and fast_1.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.paper_plots import plots
from benchmarks.ruled import FASTER, geomean
from evaluator.config import EvalConfig
from graph.runner.jsonl import read_jsonl
from graph.runner.report import metrics

KS = (1, 2, 4, 8)
REGIONS = "_regions"  # the suffix of a setup's region-format configuration (benchmarks.kernelbench_paper)
NO_MODEL_CONFIG = "no_model" + REGIONS  # the framework's own bodies, no model loaded


def load(runs: Path, configs: list[str]) -> list[dict[str, Any]]:
    """Every finished task of every configuration, tagged with its configuration and, where its best
    candidate is strictly correct, whether that candidate's kernels replace reference work (the verdict's
    `custom.replaced`: kernels of the reference that the candidate launches fewer times)."""
    out = []
    for name in configs:
        replaced = {
            str(v["job_id"]): bool(((v.get("evidence") or {}).get("custom") or {}).get("replaced"))
            for v in read_jsonl(runs / name / "verdicts.jsonl")
            if "job_id" in v
        }
        for r in read_jsonl(runs / name / "results.jsonl"):
            suffix = f"{r.get('task')}|{r.get('name')}/{r.get('best_id')}"
            hits = [ok for job, ok in replaced.items() if job.endswith(suffix)]
            out.append(r | {"config": name, "replaces_reference_work": bool(hits) and all(hits)})
    return out


def verdicts(runs: Path, configs: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Each configuration's verdicts so far, one per job (the last one handed back)."""
    by_config = {}
    for name in configs:
        last = {v["job_id"]: v for v in read_jsonl(runs / name / "verdicts.jsonl") if "job_id" in v}
        by_config[name] = list(last.values())
    return by_config


def measured_on(verdicts: list[dict[str, Any]], records: list[dict[str, Any]]) -> dict[str, Any]:
    """Model, GPU, torch and the oracle's settings as the runs recorded them (never assumed)."""

    def seen(key: str) -> str:
        values = {str(ev[key]) for v in verdicts if (ev := v.get("evidence") or {}).get(key)}
        return ", ".join(sorted(values))

    model = records[0].get("model") or {}
    overrides = {
        json.dumps((r.get("context") or {}).get("eval_overrides") or {}, sort_keys=True) for r in records
    }
    settings = (
        "atol",
        "rtol",
        "trials",
        "signed_trial",
        "allow_tf32",
        "min_custom_share",
        "timing_trials",
        "reference_compile",
    )
    oracles = [EvalConfig().replace(**json.loads(o)) for o in sorted(overrides)]
    return {
        "model": f"{model.get('name', '?')} {model.get('quantisation', '')}".strip(),
        "gpu": seen("gpu") or "?",
        "torch": seen("torch") or "not recorded",
        "oracle": [{k: getattr(c, k) for k in settings} for c in oracles],
    }


def table_rows(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per configuration and level, then one per configuration over all levels (level 'all')."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in records:
        groups.setdefault((r["config"], str(r["level"])), []).append(r)
        groups.setdefault((r["config"], "all"), []).append(r)
    rows = []
    for (config, level), group in groups.items():
        correct = [r for r in group if r.get("correct_strict")]
        shares = [r["custom_kernel_share"] for r in correct if r.get("custom_kernel_share") is not None]
        n = len(group)
        rows.append(
            {
                "config": config,
                "level": level,
                **metrics(group),
                "kernelbench_correct_no_custom_work": sum(
                    bool(r.get("correct_kernelbench")) and not (r.get("custom_kernel_share") or 0) > 0
                    for r in group
                ),
                "median_custom_share": statistics.median(shares) if shares else None,
                "correct_replacing_work": sum(bool(r.get("replaces_reference_work")) for r in correct),
                "tokens_per_task": sum(
                    (r.get("prompt_tokens") or 0) + (r.get("completion_tokens") or 0) for r in group
                )
                / n,
                "seconds_per_task": sum(r.get("node_seconds") or 0.0 for r in group) / n,
            }
        )
    return sorted(rows, key=lambda row: (row["config"], row["level"] == "all", row["level"]))


def format_pairs(rows: list[dict[str, Any]]) -> list[tuple[str, str, dict | None, dict | None]]:
    """(setup, level, its program row, its regions row) for every setup run in either format."""
    by = {(r["config"], r["level"]): r for r in rows}
    keys = dict.fromkeys((c.removesuffix(REGIONS), level) for c, level in by)
    return [(setup, level, by.get((setup, level)), by.get((setup + REGIONS, level))) for setup, level in keys]


def _pair(program: dict | None, regions: dict | None, fmt: Callable[[dict], str]) -> str:
    return " / ".join(fmt(r) if r else "-" for r in (program, regions))


def format_table(rows: list[dict[str, Any]]) -> list[str]:
    """The two formats side by side per setup and level: whole programs / region contracts."""

    def x(v: float | None) -> str:
        return "-" if v is None else f"{v:.2f}x"

    columns = [
        ("tasks", lambda r: str(r["tasks"])),
        ("correct %", lambda r: f"{r['correct_pct']:.0f}"),
        ("correct (KB) %", lambda r: f"{r['correct_kernelbench_pct']:.0f}"),
        ("correct, replacing reference work", lambda r: str(r["correct_replacing_work"])),
        ("fast_1 %", lambda r: f"{r['fast_1_pct']:.0f}"),
        ("speedup vs eager", lambda r: x(r["geomean_speedup_eager"])),
        ("speedup vs compile", lambda r: x(r["geomean_speedup_compile"])),
        ("tokens / task", lambda r: f"{r['tokens_per_task']:.0f}"),
        ("CPU s / task", lambda r: f"{r['seconds_per_task']:.0f}"),
    ]
    lines = [
        "| setup | level | " + " | ".join(name for name, _ in columns) + " |",
        "|---|---|" + "---|" * len(columns),
    ]
    ordered = sorted(format_pairs(rows), key=lambda p: (p[0], p[1] == "all", p[1]))
    for setup, level, program, regions in ordered:
        cells = " | ".join(_pair(program, regions, fmt) for _, fmt in columns)
        lines.append(f"| {setup} | {level} | {cells} |")
    return lines


def per_task_table(records: list[dict[str, Any]]) -> list[str]:
    """Region-format setups per task: the best candidate's speedup over eager / over torch.compile where
    it is strictly correct, else its verdict."""
    configs = sorted({r["config"] for r in records if r["config"].endswith(REGIONS)})
    if not configs:
        return []
    cells: dict[str, dict[str, str]] = {}
    for r in records:
        if r["config"] in configs:
            if r.get("correct_strict"):
                e, c = r.get("speedup_eager"), r.get("speedup_compile")
                cell = f"{e:.2f} / {c:.2f}" if e and c else f"{e or 0:.2f} / -"
            else:
                cell = str(r.get("verdict"))
            cells.setdefault(r["task"], {})[r["config"]] = cell
    lines = [
        "| task | " + " | ".join(c.removesuffix(REGIONS) for c in configs) + " |",
        "|---|" + "---|" * len(configs),
    ]
    for task in sorted(cells, key=lambda t: (t.split("/")[0], t)):
        lines.append(f"| {task} | " + " | ".join(cells[task].get(c, "-") for c in configs) + " |")
    return lines


def beside_no_model(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each model configuration on region contracts against the no-model row, on the tasks both finished:
    what the model adds on top of the framework's own bodies. Strictly correct and at least FASTER x eager
    in each row; where both are strictly correct, how often the model's program is FASTER x faster or slower
    than the no-model program (each speedup measured against eager in its own candidate's trials) and the
    geomean of model over no-model."""
    by: dict[str, dict[str, dict[str, Any]]] = {}
    for r in records:
        by.setdefault(r["config"], {})[r["task"]] = r
    base = by.get(NO_MODEL_CONFIG)
    if not base:
        return []
    rows = []
    for config in sorted(c for c in by if c.endswith(REGIONS) and c != NO_MODEL_CONFIG):
        pairs = [(by[config][t], base[t]) for t in sorted(set(by[config]) & set(base))]
        ok = [(bool(m.get("correct_strict")), bool(b.get("correct_strict"))) for m, b in pairs]
        ratios = [
            m["speedup_eager"] / b["speedup_eager"]
            for (m, b), (m_ok, b_ok) in zip(pairs, ok, strict=True)
            if m_ok and b_ok and m.get("speedup_eager") and b.get("speedup_eager")
        ]
        rows.append(
            {
                "config": config,
                "tasks": len(pairs),
                "correct": [sum(m for m, _ in ok), sum(b for _, b in ok)],
                "correct_only": [sum(m and not b for m, b in ok), sum(b and not m for m, b in ok)],
                "faster_than_eager": [sum(_fast(m) for m, _ in pairs), sum(_fast(b) for _, b in pairs)],
                "model_faster": sum(x >= FASTER for x in ratios),
                "model_slower": sum(x <= 1 / FASTER for x in ratios),
                "geomean_model_over_no_model": geomean(ratios),
            }
        )
    return rows


def _fast(record: dict[str, Any]) -> bool:
    return bool(record.get("correct_strict")) and (record.get("speedup_eager") or 0) >= FASTER


def beside_no_model_table(rows: list[dict[str, Any]]) -> list[str]:
    """beside_no_model as Markdown: each pair of counts is model / no model."""
    lines = [
        "| config | tasks both finished | strictly correct | correct in one row only "
        f"| at least {FASTER}x eager | model's program at least {FASTER}x faster / slower "
        "| geomean model / no model |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ratio = r["geomean_model_over_no_model"]
        lines.append(
            f"| {r['config'].removesuffix(REGIONS)} | {r['tasks']} | {r['correct'][0]} / {r['correct'][1]} "
            f"| {r['correct_only'][0]} / {r['correct_only'][1]} "
            f"| {r['faster_than_eager'][0]} / {r['faster_than_eager'][1]} "
            f"| {r['model_faster']} / {r['model_slower']} | {'-' if ratio is None else f'{ratio:.3f}x'} |"
        )
    return lines


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that k of n candidates (c of them good), drawn without replacement, hold a good one."""
    if k > n:
        raise ValueError(f"k={k} > n={n}")
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


# What counts as a good candidate for each best-of-n curve.
CURVES: dict[str, Callable[[dict[str, Any]], bool]] = {
    "correct": lambda c: c["verdict"] == "correct",
    "correct_kernelbench": lambda c: bool(c["correct_kernelbench"]),
    "kernelbench_custom_work": lambda c: (
        bool(c["correct_kernelbench"]) and (c["custom_kernel_share"] or 0) > 0
    ),
    "fast_1": lambda c: c["verdict"] == "correct" and (c["speedup_eager"] or 0) > 1.0,
}


def best_of_n(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """{config: {"k": KS, "tasks": n, curve: [pass@k % for KS] for each of CURVES}} for runs of >= 8
    candidates per task."""
    curves: dict[str, dict[str, Any]] = {}
    by_config: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        if len(r.get("candidates") or []) >= max(KS):
            by_config.setdefault(r["config"], []).append(r)
    for config, group in by_config.items():
        counts = {name: [sum(map(test, r["candidates"])) for r in group] for name, test in CURVES.items()}
        n = [len(r["candidates"]) for r in group]
        curves[config] = {"k": list(KS), "tasks": len(group)} | {
            name: [100.0 * sum(map(pass_at_k, n, good, [k] * len(n))) / len(group) for k in KS]
            for name, good in counts.items()
        }
    return curves


def common_tasks(records: list[dict[str, Any]], curves: dict[str, Any]) -> set[str] | None:
    """The tasks every best-of-n run finished, when their task sets differ (a run still generating or
    waiting for the GPU host): the curves compare like with like only there. None when they agree."""
    if len(curves) < 2:
        return None
    sets = [{r["task"] for r in records if r["config"] == config} for config in curves]
    common = set.intersection(*sets)
    return None if all(s == common for s in sets) else common


def finished_commits(records: list[dict[str, Any]]) -> str:
    """Which commit of the pipeline finished each configuration's tasks (a run spans sessions and commits)."""
    by_config: dict[str, dict[str, int]] = {}
    for r in records:
        commits = by_config.setdefault(r["config"], {})
        commit = r.get("commit") or "not recorded"
        commits[commit] = commits.get(commit, 0) + 1
    return "; ".join(
        f"{config} " + ", ".join(f"{c}: {n}" for c, n in sorted(commits.items()))
        for config, commits in sorted(by_config.items())
    )


def markdown(
    rows: list[dict[str, Any]],
    curves: dict[str, Any],
    meta: dict[str, Any],
    common: dict[str, Any],
    records: list[dict[str, Any]],
    beside: list[dict[str, Any]],
) -> str:
    def fmt(v: float | None, spec: str = ".2f", unit: str = "x") -> str:
        return "-" if v is None else f"{v:{spec}}{unit}"

    oracle = "; ".join(
        f"fp32 atol {o['atol']:g}, rtol {o['rtol']:g}, {o['trials']} seeded trials"
        f"{' plus a signed-input trial' if o['signed_trial'] else ''}, TF32 "
        f"{'on' if o['allow_tf32'] else 'off'}, custom kernels at least {o['min_custom_share']:.0%} of GPU "
        f"time; timing: CUDA events with an L2 flush, median of {o['timing_trials']} trials, against eager "
        f"and torch.compile ({o['reference_compile'].replace('_', ' ')})"
        for o in meta["oracle"]
    )
    lines = [
        "# The paper's experiment, measured",
        "",
        f"Model {meta['model']}; GPU {meta['gpu']}; torch {meta['torch']}. Correctness: the evaluator's "
        f"strict verdict ({oracle}); the KernelBench-compatible rate beside it. `tasks` counts the finished "
        "tasks of each configuration.",
        "",
        f"Finished at (commit: tasks; a deferred task finishes when its last round's verdicts come back): "
        f"{finished_commits(records)}.",
        "",
        "| config | level | tasks | correct % | correct (KB) % | KB-correct, no custom work | fast_1 % "
        "| speedup vs eager | speedup vs compile | custom share | tokens / task | s / task |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['config']} | {r['level']} | {r['tasks']} | {r['correct_pct']:.0f} "
            f"| {r['correct_kernelbench_pct']:.0f} | {r['kernelbench_correct_no_custom_work']} "
            f"| {r['fast_1_pct']:.0f} | {fmt(r['geomean_speedup_eager'])} "
            f"| {fmt(r['geomean_speedup_compile'])} "
            f"| {fmt(r['median_custom_share'], '.2f', '')} | {r['tokens_per_task']:.0f} "
            f"| {r['seconds_per_task']:.0f} |"
        )
    lines += [
        "",
        "## Whole programs / region contracts",
        "",
        "Each cell: the setup with the model writing whole `ModelNew` programs (the paper's format) / on "
        "region contracts (the framework writes everything but each kernel's body; `--format regions`).",
        "",
        *format_table(rows),
    ]
    if per_task := per_task_table(records):
        lines += [
            "",
            "## Region contracts per task",
            "",
            "The best candidate's speedup over eager / over torch.compile where it is strictly correct, "
            "else its verdict.",
            "",
            *per_task,
        ]
    if beside:
        lines += [
            "",
            "## What the model adds: region contracts against the no-model row",
            "",
            "On the tasks a model configuration and the no-model row (every body written by rule) both "
            "finished; each pair of counts is model / no model. Speedups are each program's own, measured "
            "against eager in its candidate's trials; a ratio within 5% of 1 counts as neither.",
            "",
            *beside_no_model_table(beside),
        ]
    if curves:
        lines += [
            "",
            "Best-of-n (unbiased estimate from each task's candidates). KB-correct with custom work: "
            "KernelBench's check passes and some GPU time is in the candidate's own kernels.",
            "",
            *_curve_table(curves),
        ]
    if common:
        tasks = next(iter(common.values()))["tasks"]
        lines += [
            "",
            f"Best-of-n on the {tasks} tasks every best-of-n run has finished, side by side:",
            "",
            *_curve_table(common),
        ]
    return "\n".join(lines) + "\n"


def _curve_table(curves: dict[str, Any]) -> list[str]:
    """A Markdown table of best-of-n curves: one row per configuration and n."""
    return [
        "| config | tasks | n | correct % | correct (KB) % | KB-correct with custom work % | fast_1 % |",
        "|---|---|---|---|---|---|---|",
    ] + [
        f"| {config} | {c['tasks']} | {k} | " + " | ".join(f"{c[name][i]:.0f}" for name in CURVES) + " |"
        for config, c in curves.items()
        for i, k in enumerate(c["k"])
    ]


def write_report(runs: Path, configs: list[str], out_dir: Path) -> int:
    """Raw lines (finished tasks, and every verdict so far), summary JSON, Markdown table and PNGs into
    `out_dir`; 1 when nothing has finished yet."""
    records = load(runs, configs)
    if not records:
        print(f"no finished tasks under {runs} yet", flush=True)
        return 1
    out_dir.mkdir(parents=True, exist_ok=True)
    rows, curves = table_rows(records), best_of_n(records)
    shared = common_tasks(records, curves)
    common = best_of_n([r for r in records if r["task"] in shared]) if shared else {}
    beside = beside_no_model(records)
    by_config = verdicts(runs, configs)
    meta = measured_on([v for lines in by_config.values() for v in lines], records)
    (out_dir / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    for name, lines in by_config.items():  # every candidate's verdict so far, finished tasks or not
        if lines:
            (out_dir / "verdicts").mkdir(exist_ok=True)
            (out_dir / "verdicts" / f"{name}.jsonl").write_text("".join(json.dumps(v) + "\n" for v in lines))
    (out_dir / "summary.json").write_text(
        json.dumps(
            {
                "meta": meta,
                "rows": rows,
                "beside_no_model": beside,
                "best_of_n": curves,
                "best_of_n_common_tasks": common,
            },
            indent=1,
        )
    )
    (out_dir / "table.md").write_text(markdown(rows, curves, meta, common, records, beside))
    plots(rows, [p for p in format_pairs(rows) if p[1] == "all"], curves, common, out_dir)
    print((out_dir / "table.md").read_text())
    return 0
