"""Every loop kind on the GPU: hand-written bodies for every region offered at moderate in the project's own
family tasks (a window, a scan, an argmax's int64 indices, reductions over strided dims with the variance's
divisor, the pointwise steps of a rewritten batch norm and loss, both branches of an if on data), exported
and judged by the evaluator as the region kind at the tasks' own sizes. Each must be strictly correct, every
region's own check too."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluator.problem import load_problem
from regions.export import Written, export_program, region_markers
from regions.offering import choose, contracted, cut
from regions.trace import trace_problem

MEAN = "for (int64_t k = 0; k < R; ++k) result += {x}(k);"  # the framework divides
SPREAD = (
    "for (int64_t k = 0; k < R; ++k) {{\n    const float d = {x}(k) - row_mean;\n    result += d * d;\n}}"
)
# task -> one body per offered region, in order ({x}: the region's first input as the contract names it)
BODIES: dict[str, list[str]] = {
    "level1/1_Max_Pool_2d_Window.py": [
        "for (int64_t a = 0; a < KH; ++a)\n"
        "    for (int64_t b = 0; b < KW; ++b) result = fmaxf(result, x(a, b));"
    ],
    "level1/4_Cumulative_Sum_Rows.py": [
        "for (int64_t k = 0; k < R; ++k) {{ carry += {x}(k); out(k) = carry; }}"
    ],
    "level1/6_Argmax_Over_Channels.py": [
        "for (int64_t k = 0; k < R; ++k)\n    if ({x}(k) > best) {{ best = {x}(k); index = k; }}",
    ],
    "level1/10_Batch_Norm_Training_Stats.py": [
        MEAN,
        SPREAD,
        "float t1 = x - t0;\nfloat t2 = v_t1 + 1e-05f;\nfloat t3 = rsqrtf(t2);\nfloat t4 = t1 * t3;\n"
        "float t5 = t4 * v_t6;\nfloat t6 = t5 + t8;",
    ],
    "level3/3_Branch_On_Data.py": [MEAN, "float t1 = fmaxf(t2, 0.0f);", "float t1 = tanhf(t4);"],
    "level1/12_Huber_Loss_Mean.py": [  # |d| is read twice: the pointwise steps are one region
        "float t1 = pred - target;\nfloat t2 = fabsf(t1);\nfloat t3 = fminf(t2, 0.5f);\n"
        "float t4 = 0.5f * t3;\nfloat t5 = t2 - t4;\nfloat t6 = t3 * t5;",
        MEAN,
    ],
}


@pytest.mark.gpu
@pytest.mark.parametrize("task", sorted(BODIES))
def test_every_kind_is_strictly_correct_on_the_gpu(task: str, eval_cache: Path, families_dir: Path) -> None:
    from evaluator.api import evaluate_many
    from evaluator.config import EvalConfig
    from evaluator.jobs import Job

    problem, written = _written(families_dir / task, task)
    source = export_program(problem, written, "nvrtc")
    job = Job(task, problem, source, code=source, extracted=True, regions=region_markers(written))
    config = EvalConfig(backend="cuda", cache_dir=str(eval_cache), reference_compile="off", timing_trials=10)
    (verdict,) = evaluate_many([job], config)
    assert verdict["verdict"] == "correct", (verdict["evidence"], verdict["log_tail"][-2000:])
    assert [r["verdict"] for r in verdict["evidence"]["regions"]] == ["correct"] * len(written)


def _written(path: Path, task: str) -> tuple[object, list[Written]]:
    from regions.skeleton import c_names

    problem = load_problem(path)
    # moderate's offer on conservative's cut: the statistics apart from their steps, each body the GPU
    # bodies' own (moderate fuses a norm's `+ eps` and rsqrt into its variance)
    fit, _ = contracted(cut(trace_problem(problem), "conservative"))
    chosen = choose(fit, "moderate")
    assert len(chosen) == len(BODIES[task]), [r.id for r, _ in chosen]
    return problem, [
        Written(region, contract, body.format(x=c_names(region)[region.inputs[0].name]))
        for (region, contract), body in zip(chosen, BODIES[task], strict=True)
    ]


@pytest.mark.parametrize("task", sorted(BODIES))
def test_the_gpu_bodies_compile_and_emulate_here(task: str, families_dir: Path) -> None:
    """The same bodies under NVRTC and in the CPU emulation (a batch norm's map reads a random signed
    "variance": where PyTorch gives NaN the emulation does not judge)."""
    from regions.check import check
    from regions.emulate import emulate, small_twin

    problem, written = _written(families_dir / task, task)
    for w in written:
        assert check(w.contract, w.body).ok
        small = small_twin(problem.source, w.region, "conservative")
        assert small is not None and emulate(*small, w.body).ok, w.region.id
