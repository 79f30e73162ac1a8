"""The paper table's plots (benchmarks.paper_report): strict and KernelBench-correct rates per
configuration, the two formats side by side, and the best-of-n curves. matplotlib is imported on use."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def plots(
    rows: list[dict[str, Any]],
    pairs: list[tuple[str, str, dict | None, dict | None]],
    curves: dict[str, Any],
    common: dict[str, Any],
    out_dir: Path,
) -> None:
    """strategies.png (strict and KernelBench-correct % per configuration), formats.png (`pairs`: each
    setup's whole-program and region rows over all levels) and, with best-of-n curves, best_of_n.png."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    overall = [r for r in rows if r["level"] == "all"]
    fig, ax = plt.subplots(figsize=(9, 4))
    names = [r["config"] for r in overall]
    x = range(len(names))
    ax.bar([i - 0.2 for i in x], [r["correct_pct"] for r in overall], 0.4, label="correct (strict) %")
    ax.bar([i + 0.2 for i in x], [r["correct_kernelbench_pct"] for r in overall], 0.4, label="correct (KB) %")
    ax.set_xticks(
        list(x), [f"{n}\n({r['tasks']} tasks)" for n, r in zip(names, overall, strict=True)], fontsize=7
    )
    ax.set_ylabel("% of tasks")
    ax.set_title("Strategies side by side, all levels")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out_dir / "strategies.png", dpi=120)
    plt.close(fig)
    _formats_plot(pairs, out_dir)
    if curves:
        panels = [("each run's finished tasks", curves)]
        if common:
            panels.append((f"the {next(iter(common.values()))['tasks']} tasks all runs finished", common))
        fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4), squeeze=False)
        for ax, (title, group) in zip(axes[0], panels, strict=True):
            _best_of_n_panel(ax, group, title)
        fig.tight_layout()
        fig.savefig(out_dir / "best_of_n.png", dpi=120)
        plt.close(fig)


def _formats_plot(pairs: list[tuple[str, str, dict | None, dict | None]], out_dir: Path) -> None:
    """Strict correct % per setup over all levels, whole programs beside region contracts."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 4))
    x = range(len(pairs))
    for offset, k, label in ((-0.2, 2, "whole programs"), (0.2, 3, "region contracts")):
        heights = [(p[k] or {}).get("correct_pct", 0.0) for p in pairs]
        ax.bar([i + offset for i in x], heights, 0.4, label=label)
    ax.set_xticks(list(x), [p[0] for p in pairs], fontsize=7)
    ax.set_ylabel("% of tasks strictly correct")
    ax.set_title("The same setups in both formats, all levels")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out_dir / "formats.png", dpi=120)
    plt.close(fig)


def _best_of_n_panel(ax: Any, curves: dict[str, Any], title: str) -> None:
    """One best-of-n panel: strict, KernelBench and KernelBench-with-custom-work curves per run."""
    for config, c in curves.items():
        name = f"{config} ({c['tasks']} tasks)"
        ax.plot(c["k"], c["correct"], marker="o", label=f"{name}: correct (strict)")
        ax.plot(c["k"], c["correct_kernelbench"], marker="x", linestyle="--", label=f"{name}: correct (KB)")
        ax.plot(
            c["k"],
            c["kernelbench_custom_work"],
            marker=".",
            linestyle=":",
            label=f"{name}: KB-correct, custom work",
        )
    ax.set_xscale("log", base=2)
    ks = sorted({k for c in curves.values() for k in c["k"]})
    ax.set_xticks(ks, [str(k) for k in ks])
    ax.set_xlabel("n (candidates)")
    ax.set_ylabel("% of tasks")
    ax.set_title(f"Best-of-n, {title}")
    ax.legend(fontsize=7)
