"""Deferred evaluation end to end on the CPU: the graph's interrupt jobs go through `python -m evaluator run`.

The model is scripted (a hand-written, correct C++ kernel for demo task 1), the evaluator is real: this
checks that the jobs the evaluate node emits are valid job-file lines and that real result lines resume
the graph to a real verdict. Slow: one C++ extension build (~35 s on 2 cores).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from graph_fakes import ScriptedModel
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from graph import compile_graph
from graph.demo_tasks import demo_paths
from nodes.context import Context
from nodes.model.llm import use_model

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]

FUSED_LEAKY_RELU = '''```python
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = """
#include <torch/extension.h>

torch::Tensor fused_cpu(torch::Tensor x, double slope, double scale, double shift) {
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    const float* px = xc.data_ptr<float>();
    float* po = out.data_ptr<float>();
    const float s = (float)slope, a = (float)scale, b = (float)shift;
    int64_t n = xc.numel();
    #pragma omp parallel for
    for (int64_t i = 0; i < n; ++i) {
        float v = px[i];
        po[i] = (v > 0.0f ? v : v * s) * a + b;
    }
    return out;
}
"""

ext = load_inline(name="kg_test_fused_leaky", cpp_sources=cpp_source, functions=["fused_cpu"],
                  extra_cflags=["-O3", "-fopenmp"], extra_ldflags=["-fopenmp"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, slope, scale, shift):
        super().__init__()
        self.slope, self.scale, self.shift = slope, scale, shift

    def forward(self, x):
        return ext.fused_cpu(x, self.slope, self.scale, self.shift)
```'''


def test_interrupt_jobs_run_through_the_evaluator_cli_and_resume(tmp_path: Path) -> None:
    path = demo_paths()[0]
    task = {"name": path.stem.split("_", 1)[1], "level": 0, "problem_id": 1, "source": path.read_text()}
    graph = compile_graph("zero_shot", checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "deferred-cli"}}
    ctx = Context(backend="cpu", evaluator="deferred",
                  eval_overrides={"timing_trials": 5, "warmup": 1, "reference_compile": "off"})
    with use_model(ScriptedModel(lambda messages, kwargs: FUSED_LEAKY_RELU)):
        paused = graph.invoke({"task": task}, config=config, context=ctx)
    jobs = paused["__interrupt__"][0].value["jobs"]
    jobs_file, results_file = tmp_path / "jobs.jsonl", tmp_path / "results.jsonl"
    jobs_file.write_text("".join(json.dumps(job) + "\n" for job in jobs))
    command = [sys.executable, "-m", "evaluator", "run", str(jobs_file), "--out", str(results_file)]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    results = [json.loads(line) for line in results_file.read_text().splitlines()]
    out = graph.invoke(Command(resume=results), config=config, context=ctx)
    verdict = out["best"]["verdict"]
    assert verdict["verdict"] == "correct" and verdict["correct_strict"], verdict.get("log_tail", "")[-1500:]
    assert verdict["evidence"]["backend"] == "cpu"
    assert [e["node"] for e in out["events"]] == ["generate", "evaluate", "select"]
