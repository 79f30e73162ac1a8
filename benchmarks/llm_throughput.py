"""LLM throughput on this machine: prompt and generation tokens/s, and what best-of-n really costs.

Best-of-n sends one prompt n times with different seeds. llama.cpp keeps the KV cache of the last prompt,
so samples 2..n should skip prompt processing almost entirely; this measures it with llama.cpp's own
prompt-evaluation counters. A control sends an unrelated prompt in between and then the same prompt again,
which must pay the full prompt cost once more: it shows the counter is not trivially zero.

    python -m benchmarks.llm_throughput [-n 4] [--max-tokens 128] [--out benchmarks/results]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path
from typing import Any

from nodes.model.llm import Completion, LlamaCppModel, configure_model, model_info, shared_model

REPO = Path(__file__).resolve().parent.parent
DEFAULT_PROBLEM = REPO.parent / "shared" / "kernelbench" / "level3" / "9_ResNet18.py"

INSTRUCTIONS = """You write custom CUDA kernels for PyTorch models.
Replace the operators of the model below with custom CUDA kernels compiled through
torch.utils.cpp_extension.load_inline. Name the new class ModelNew, keep the same constructor and forward
signature, and return one Python code block with the complete module. Think about memory coalescing,
vectorised loads, grid-stride loops and shared-memory tiling where they apply.
"""


def _prompt(problem: Path) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": "You are an expert CUDA engineer."},
        {"role": "user", "content": f"{INSTRUCTIONS}\n```python\n{problem.read_text()}\n```"},
    ]


def _row(label: str, c: Completion) -> dict[str, Any]:
    generate_seconds = max(c.seconds - c.prompt_seconds, 1e-9)
    return {
        "label": label,
        "prompt_tokens": c.prompt_tokens,
        "prompt_eval_tokens": c.prompt_eval_tokens,
        "prompt_seconds": round(c.prompt_seconds, 4),
        "completion_tokens": c.completion_tokens,
        "seconds": round(c.seconds, 3),
        "generation_tokens_per_s": round(c.completion_tokens / generate_seconds, 2),
    }


def run(samples: int, max_tokens: int, problem: Path) -> dict[str, Any]:
    started = time.perf_counter()
    model = shared_model()
    assert isinstance(model, LlamaCppModel), "the benchmark measures the real llama.cpp model"
    load_seconds = time.perf_counter() - started
    prompt = _prompt(problem)
    evict = [{"role": "user", "content": "Name one prime number."}]

    model.chat(evict, max_tokens=4)
    rows = [
        _row(f"sample {i + 1}", model.chat(prompt, max_tokens=max_tokens, temperature=0.7, seed=i))
        for i in range(samples)
    ]
    model.chat(evict, max_tokens=4)
    control = _row(
        "after an interleaved prompt", model.chat(prompt, max_tokens=max_tokens, temperature=0.7, seed=99)
    )

    first = rows[0]
    later = rows[1:]
    ratios = [r["prompt_seconds"] / first["prompt_seconds"] for r in later]
    return {
        "machine": {
            "platform": platform.platform(),
            "cpus": len(os.sched_getaffinity(0)),
            "loadavg_1min_at_end": round(os.getloadavg()[0], 2),  # other work on the cores skews tokens/s
        },
        "model": model_info(),
        "problem": problem.name,
        "load_seconds": round(load_seconds, 2),
        "prompt_tokens_per_s": round(first["prompt_eval_tokens"] / first["prompt_seconds"], 2),
        "generation_tokens_per_s": round(
            sum(r["completion_tokens"] for r in rows)
            / sum(max(r["seconds"] - r["prompt_seconds"], 1e-9) for r in rows),
            2,
        ),
        "samples": rows,
        "control": control,
        "best_of_n": {
            "n": samples,
            "first_prompt_seconds": first["prompt_seconds"],
            "later_prompt_seconds_max": max((r["prompt_seconds"] for r in later), default=None),
            "later_over_first_max": round(max(ratios), 4) if ratios else None,
            "first_sample_seconds": first["seconds"],
            "later_sample_seconds_mean": round(sum(r["seconds"] for r in later) / len(later), 3),
            "target": "each later sample < 0.10 of the first sample's prompt time",
            "met": bool(ratios) and max(ratios) < 0.10,
            "control_over_first": round(control["prompt_seconds"] / first["prompt_seconds"], 3),
        },
    }


def plot(result: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = result["samples"] + [result["control"]]
    labels = [r["label"].replace("after an interleaved prompt", "control") for r in rows]
    prompt = [r["prompt_seconds"] for r in rows]
    generate = [r["seconds"] - r["prompt_seconds"] for r in rows]
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.bar(labels, prompt, label="prompt processing")
    ax.bar(labels, generate, bottom=prompt, label="generation")
    ax.set_ylabel("seconds")
    ax.set_title(
        f"{result['model']['name']} {result['model']['quantisation']}, {result['machine']['cpus']} CPUs: "
        f"best-of-{result['best_of_n']['n']} on one prompt"
    )
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("-n", "--samples", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--problem", type=Path, default=DEFAULT_PROBLEM)
    parser.add_argument("--model", default=None, help="GGUF path (default: the embedded model)")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results")
    args = parser.parse_args(argv)
    if args.samples < 2:
        parser.error("best-of-n needs at least 2 samples")
    configure_model(path=args.model)
    result = run(args.samples, args.max_tokens, args.problem)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "llm_throughput.json").write_text(json.dumps(result, indent=2) + "\n")
    plot(result, args.out / "llm_throughput.png")
    print(
        json.dumps(
            {k: result[k] for k in ("prompt_tokens_per_s", "generation_tokens_per_s", "best_of_n")}, indent=2
        )
    )
    return 0 if result["best_of_n"]["met"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
