"""Region mode (graphs built in the "regions" format, the default): a scripted model writes kernel bodies,
the real local checks (lint + NVRTC) judge them here, and a scripted evaluator answers with the region kind's
verdicts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from graph_fakes import TASK, answer, choosing
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

import regions.trace
from evaluator.problem import load_problem, problem_to_dict
from evaluator.verdict import make, region_check
from graph import compile_graph
from nodes.context import STRATEGIES, Context
from nodes.state import Candidate
from tools.evaluator import EVALUATOR

SCALAR = "level1/5_Matrix_scalar_multiplication.py"
REGION_PROMPT = "You write the body of one CUDA kernel"


@pytest.fixture
def task(kernelbench_dir: Path) -> dict[str, Any]:
    return problem_to_dict(load_problem(kernelbench_dir / SCALAR))


def _region_verdict(job: dict[str, Any], ok: bool) -> dict[str, Any]:
    """The region kind's verdict as the GPU host writes it: whole-program verdict plus each region's own."""
    compared: dict[str, Any] = {"ok": ok}
    if not ok:
        compared |= {
            "reason": "values",
            "first_mismatch_index": [3, 7],
            "first_mismatch": {"expected": 0.25, "got": 1.25},
            "mismatches": 1024,
            "numel": 4096,
        }
    verdict = make("correct" if ok else "wrong_output", speedup_eager=0.95 if ok else None)
    verdict["evidence"] = {"regions": [region_check(job["regions"][0]["id"], compared)]}
    return {"job_id": job["job_id"], **verdict}


def _documented(candidates: list[dict[str, Any]]) -> None:
    """Every key a candidate carries is one the Candidate record documents."""
    for candidate in candidates:
        assert not set(candidate) - set(Candidate.__annotations__), set(candidate)


def _zero_shot_judged_right(
    task: dict[str, Any], ctx: Context
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """zero_shot on `task` with every candidate judged right: the final state and the jobs it sent."""
    seen: list[dict[str, Any]] = []

    def judge(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        seen.extend(jobs)
        return [_region_verdict(j, ok=True) for j in jobs]

    with EVALUATOR.use(judge):
        state = compile_graph("zero_shot").invoke({"task": task}, context=ctx)
    return state, seen


def test_zero_shot_writes_one_kernel_body_and_the_framework_the_program(scripted, task) -> None:
    model = scripted(lambda m, kw: "```cuda\nfloat t1 = A * s;\n```")
    state, seen = _zero_shot_judged_right(task, Context(samples=2))
    prompts = [c[0][-1]["content"] for c in model.calls]
    assert len(prompts) == 2 and all("t1 = A * s" in p for p in prompts)  # the contract, not the program
    assert REGION_PROMPT in model.calls[0][0][0]["content"]
    assert sorted(c[1]["temperature"] for c in model.calls) == [0.0, 0.5]  # one greedy, one cooler
    best = state["best"]
    assert best["format"] == "regions" and best["local_ok"] and best["bodies"] == {"r0": "float t1 = A * s;"}
    assert "load_region_kernel(" in best["code"] and "float t1 = A * s;" in best["code"]
    job = seen[0]
    assert job["code"] == state["candidates"][0]["code"] and job["regions"][0]["launch"] == "region_r0_launch"
    assert job["regions"][0]["spec"]["steps"][0]["code"].endswith("= A * s")  # the region's PyTorch line
    event = next(e for e in state["events"] if e["node"] == "generate")
    assert event["inputs"]["format"] == "regions" and event["outputs"]["answers"] == {"r0": 1}


def test_the_rules_writer_writes_every_body_without_the_model(scripted, task) -> None:
    """writer=rules: the no-model baseline; the framework's own body goes through the same checks and job."""
    model = scripted(lambda m, kw: pytest.fail("the model was asked"))
    state, seen = _zero_shot_judged_right(task, Context(writer="rules"))
    assert model.calls == [] and state["best"]["bodies"] == {"r0": "float t1 = A * s;"}
    assert state["best"]["local_ok"] and "float t1 = A * s;" in seen[0]["code"]


def test_the_problem_is_traced_once_for_its_offer_and_its_programs(scripted, task, monkeypatch) -> None:
    """The offering and export share one trace of the task (export splices a copy of it); the emulation's
    shrunk twin is a problem of its own, traced once as well."""
    traced: list[str] = []
    real = regions.trace.trace_problem

    def counted(problem: Any) -> Any:
        traced.append(problem.source)
        return real(problem)

    monkeypatch.setattr(regions.trace, "trace_problem", counted)
    scripted(lambda m, kw: "```cuda\nfloat t1 = A * s;\n```")
    fresh = {**task, "source": task["source"] + "\n# a source no earlier test traced\n"}
    state, _ = _zero_shot_judged_right(fresh, Context(samples=2))
    assert traced.count(fresh["source"]) == 1 and len(traced) == len(set(traced))
    assert len(state["candidates"]) == 2
    assert all("load_region_kernel(" in c["code"] for c in state["candidates"])


def test_refinement_repairs_the_region_from_the_element_the_gpu_named(scripted, task) -> None:
    replies = iter(["```cuda\nfloat t1 = A * s + 1.0f;\n```", "```cuda\nfloat t1 = A * s;\n```"])
    model = scripted(lambda m, kw: next(replies))

    def judge(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [_region_verdict(j, ok="+ 1.0f" not in j["code"]) for j in jobs]

    ctx = Context(rounds=3, stop_on="correct", emulate=False)  # the GPU's word alone (the CPU would see it)
    with EVALUATOR.use(judge):
        state = compile_graph("iterative_refinement").invoke({"task": task}, context=ctx)
    assert [c["verdict"]["verdict"] for c in state["candidates"]] == ["wrong_output", "correct"]
    writes = model.calls_for("generate")
    assert len(writes) == 2
    repair = writes[1][0][-1]["content"]
    assert "out[3, 7] = 1.25 where PyTorch gives 0.25" in repair  # the element, expected and got
    assert "float t1 = A * s + 1.0f;" in repair  # the lines it wrote, to fix
    assert writes[1][1]["temperature"] >= 0.7  # a repair is sampled: greedy repeats itself
    assert state["best"]["bodies"] == {"r0": "float t1 = A * s;"}
    assert state["feedback"]["source"] == "regions" and model.calls_for("triage") == []  # no diagnosis call


def test_a_task_that_cannot_be_traced_falls_back_to_a_whole_program(scripted) -> None:
    untraceable = dict(
        TASK,
        source=TASK["source"].replace(
            "        return torch.relu(x)",
            "        if x.sum().item() > 0:\n            return x\n        return torch.relu(x)",
        ),
    )
    scripted(lambda m, kw: answer("correct", 1.1))
    state = compile_graph("zero_shot").invoke({"task": untraceable}, context=Context())
    (candidate,) = state["candidates"]
    assert candidate.get("format") is None and candidate["verdict"]["verdict"] == "correct"
    event = next(e for e in state["events"] if e["node"] == "generate")
    assert event["inputs"]["fallback"].startswith("region mode unavailable, a whole program instead")


def test_the_cpu_backend_falls_back_to_programs_and_says_so(scripted) -> None:
    scripted(lambda m, kw: answer("correct", 1.1))
    state = compile_graph("zero_shot").invoke({"task": TASK}, context=Context(backend="cpu"))
    event = next(e for e in state["events"] if e["node"] == "generate")
    assert "need CUDA" in event["inputs"]["fallback"]


def test_deferred_region_jobs_carry_their_regions_and_resume(scripted, task) -> None:
    scripted(lambda m, kw: "```cuda\nfloat t1 = A * s;\n```")
    graph = compile_graph("zero_shot", checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "regions"}}
    ctx = Context(evaluator="deferred")
    out = graph.invoke({"task": task}, config=config, context=ctx)
    (job,) = out["__interrupt__"][0].value["jobs"]
    assert set(job) == {"job_id", "problem", "candidate", "code", "config", "regions"}
    json.dumps(job)
    out = graph.invoke(Command(resume=[_region_verdict(job, ok=True)]), config=config, context=ctx)
    assert out["best"]["verdict"]["correct_strict"]


@pytest.mark.parametrize("name", STRATEGIES)
def test_every_strategy_runs_in_region_mode(scripted, task, name) -> None:
    """The region writer takes generate's place in every graph; the strategy's other nodes still run."""
    scripted(lambda m, kw: "```cuda\nfloat t1 = A * s;\n```")
    with EVALUATOR.use(lambda jobs: [_region_verdict(j, ok=True) for j in jobs]):
        state = compile_graph(name).invoke({"task": task}, context=Context(retrieval_k=1))
    assert all(c["format"] == "regions" and c["local_ok"] for c in state["candidates"])
    assert state["best"]["verdict"]["correct_strict"]
    _documented(state["candidates"])


def test_profiling_guided_offers_the_measured_costliest_region_and_says_its_share(
    scripted, kernelbench_dir: Path
) -> None:
    """The profile, not the bytes estimate, picks the conservative region, and its prompt says the share."""
    from tools.profiler import PROFILER

    block = problem_to_dict(load_problem(kernelbench_dir / "level3/8_ResNetBasicBlock.py"))
    model = scripted(lambda m, kw: "```cuda\nfloat t1 = kg_relu(t0);\n```")
    rows = [{"op": "aten::relu_", "share": 0.4, "calls": 1}, {"op": "aten::add_", "share": 0.1, "calls": 1}]
    profile = {"text": "| relu_ | 40% |", "rows": rows, "device": "NVIDIA H200"}
    ctx = Context(ambition="conservative")
    with PROFILER.use(lambda problem, backend, store: profile), EVALUATOR.use(lambda jobs: []):
        state = compile_graph("profiling_guided").invoke({"task": block}, context=ctx)
    (candidate,) = state["candidates"]
    # the first relu and the first add in graph order are the first batch norm's map (its eps, then relu):
    # the estimate alone would offer r16 (two batch norms, the residual add and relu)
    assert list(candidate["bodies"]) == ["r5"]
    prompt = model.calls_for("generate")[0][0][-1]["content"]
    assert "this region is about 50% of the reference model's GPU time on NVIDIA H200" in prompt
    event = next(e for e in state["events"] if e["node"] == "generate")
    assert event["inputs"]["profile_shares"] == {"r5": 0.5}


LAYER_NORM = "level2/3_ConvTranspose3d_Sum_LayerNorm_AvgPool_GELU.py"


def _corpus_hits(query: str, k: int, category: str | None) -> list[dict[str, Any]]:
    """The packaged corpus's examples that carry region bodies, as search results (no ranking needed)."""
    from retrieval_corpus.corpus import load_examples

    return [e.to_result(1.0) for e in load_examples() if e.region_bodies][:k]


def test_the_agent_plans_from_the_partition_and_shows_kernel_only_examples_of_the_kind(
    scripted, kernelbench_dir: Path
) -> None:
    """Analysis picks among the offered regions (r2, r3, r4 at moderate; r1 is the transposed
    convolution's bias, viewed by channel); retrieval gives the picked one
    whole examples of its own kind (map), which the region prompt shows under the plan line."""
    from graph_fakes import REGION_PLAN

    from tools.retriever import RETRIEVER

    task = problem_to_dict(load_problem(kernelbench_dir / LAYER_NORM))
    model = scripted(
        lambda m, kw: "```cuda\nfloat t1 = t0 + conv_transpose_bias_view;\nfloat t2 = t1 + sum_weight;\n```"
    )
    ctx = Context(rounds=1, retrieval_k=1)
    with RETRIEVER.use(_corpus_hits), EVALUATOR.use(lambda jobs: [_region_verdict(j, ok=True) for j in jobs]):
        state = compile_graph("agent").invoke({"task": task}, context=ctx)
    (plan_call,) = model.calls_for("plan")
    menu = plan_call[0][-1]["content"]
    assert "The regions you may choose" in menu and "- r3 (reduce):" in menu and "- r0 " not in menu
    assert state["plan"]["regions"] == [{"id": "r2", "plan": REGION_PLAN}]
    example, *_ = state["examples"]
    assert example["region"] == "r2" and example["kind"] == "map" and len(state["examples"]) == 1
    assert "t0" in example["text"] and "sum_weight" in example["text"]  # shown in r2's own input names
    (write,) = model.calls_for("generate")
    prompt = write[0][-1]["content"]
    assert f"Plan for this kernel: {REGION_PLAN}" in prompt
    assert "An example: a kernel of the same kind from another model" in prompt and example["text"] in prompt
    assert list(state["best"]["bodies"]) == ["r2"]  # only the region the plan chose


def _timed(job: dict[str, Any], ok: bool, ms: float) -> dict[str, Any]:
    verdict = _region_verdict(job, ok)
    if ok:
        verdict["speedup_eager"] = 1.0 / ms
        verdict["evidence"]["timing"] = {"candidate": {"ms": ms}, "reference_eager": {"ms": 1.0}}
    return verdict


@pytest.mark.parametrize(("second_ok", "launch"), [(True, "ruled"), (False, "ruled"), (True, "first")])
def test_fast_second_rewrites_a_correct_kernel_and_keeps_it_only_if_right_and_faster(
    scripted, task, second_ok, launch
) -> None:
    """The map ran on its ruled shape (vector4, the only shape of a map): that launch is kept and the lines
    rewritten, with no shape to choose. On its first contract (`launch` first) the model is offered
    vector4 and keeps the launch."""
    bodies = iter(["```cuda\nfloat t1 = A * s;\n```", "```cuda\nfloat t1 = __fmul_rn(A, s);\n```"])
    model = choosing(scripted(lambda m, kw: next(bodies)), "first")  # keep the launch, rewrite the lines

    def judge(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [
            _timed(
                j, ok=second_ok or "__fmul_rn" not in j["code"], ms=0.5 if "__fmul_rn" in j["code"] else 2.0
            )
            for j in jobs
        ]

    ctx = Context(rounds=2, stop_on="faster", launch=launch)
    with EVALUATOR.use(judge):
        state = compile_graph("iterative_refinement").invoke({"task": task}, context=ctx)
    (first, second) = model.calls_for("generate")
    prompt = second[0][-1]["content"]
    assert "You make one CUDA kernel faster" in second[0][0]["content"]
    assert "These lines are correct:\n```cuda\nfloat t1 = A * s;\n```" in prompt
    assert "they take 2 ms per call, where PyTorch takes 1 ms (0.50x)" in prompt
    assert second[1]["temperature"] > 0
    assert state["feedback"]["regions"]["r0"]["route"] == "optimise"
    kept = "float t1 = __fmul_rn(A, s);" if second_ok else "float t1 = A * s;"
    assert state["best"]["bodies"] == {"r0": kept}
    assert (
        [c["ruled"] for c in state["candidates"]] == [{"r0": "vector4"}] * 2
        if launch == "ruled"
        else [{}] * 2
    )
    if launch == "ruled":  # offering vector4 again would write the same program
        assert not model.calls_for("shape")
        why = "it runs on its ruled launch, vector4; the lines are rewritten"
    else:
        (choice,) = model.calls_for("shape")  # the model was offered vector4 and kept the launch
        assert "- vector4: four consecutive elements per thread" in choice[0][-1]["content"]
        assert "(one thread per output element or row)" in choice[0][-1]["content"]
        why = "scripted"
    assert state["candidates"][1]["shape_choices"] == {"r0": {"shape": "first", "why": why, "valid": True}}
    _documented(state["candidates"])


TWINS = """import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, y):
        return torch.matmul(torch.softmax(x, dim=1), torch.softmax(y, dim=1))


def get_inputs():
    return [torch.rand(8, 8), torch.rand(8, 8)]


def get_init_inputs():
    return []
"""


def test_twin_regions_are_written_once_and_renamed_for_each_twin(scripted) -> None:
    """Two softmaxes of one shape are the same contract up to their input's name: one model call."""
    body = (
        "float m = -INFINITY;\nfor (int64_t k = 0; k < R; ++k) m = fmaxf(m, x(k));\nfloat s = 0.0f;\n"
        "for (int64_t k = 0; k < R; ++k) s += expf(x(k) - m);\n"
        "for (int64_t k = 0; k < R; ++k) out(k) = expf(x(k) - m) / s;"
    )
    model = scripted(lambda m, kw: f"```cuda\n{body}\n```")
    task = {"name": "twins", "level": 0, "problem_id": 0, "source": TWINS}
    with EVALUATOR.use(lambda jobs: [_region_verdict(j, ok=True) for j in jobs]):
        state = compile_graph("zero_shot").invoke({"task": task}, context=Context())
    assert len(model.calls_for("generate")) == 1
    bodies = state["best"]["bodies"]
    assert bodies["r0"] == body and bodies["r1"] == body.replace("x(k)", "y(k)")
    event = next(e for e in state["events"] if e["node"] == "generate")
    assert event["outputs"]["twins"] == {"r1": "r0"} and state["best"]["local_ok"]


VECTOR_NORM = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        y = torch.relu(x)
        return torch.tanh(y / torch.linalg.vector_norm(y, ord=3, dim=1, keepdim=True))


def get_inputs():
    return [torch.randn(8, 32)]


def get_init_inputs():
    return []
"""


def test_a_region_no_contract_fits_is_left_to_pytorch_and_the_others_are_still_offered() -> None:
    """A vector norm of order 3 has no reduce contract (orders 1 and 2 are decomposed into sums): at
    moderate ambition the task does not fall back to a whole program; the two map regions around it are
    offered and the norm is PyTorch's."""
    from regions.offering import offered

    parts, _ = offered(VECTOR_NORM, "moderate")
    assert [(region.id, region.kind) for region, _ in parts] == [("r0", "map"), ("r2", "map")]
    assert all("vector_norm" not in step.target for region, _ in parts for step in region.steps)


def test_a_body_that_fails_its_local_checks_after_its_repairs_is_left_to_pytorch(scripted) -> None:
    """One region's answers never compile: the candidate leaves that region to PyTorch and sends the other
    kernel, instead of a program the GPU can only call a compile error."""

    def reply(messages: list[dict[str, str]], kwargs: dict[str, Any]) -> str:
        if "region_r2" in messages[-1]["content"]:
            return "```cuda\nresult = sum(t3(k) for k in range(R));\n```"  # Python, as the 1.5B wrote it
        return "```cuda\nfloat t1 = kg_relu(x);\n```"

    scripted(reply)
    task = {"name": "norm", "level": 0, "problem_id": 0, "source": VECTOR_NORM}
    state = compile_graph("zero_shot").invoke({"task": task}, context=Context(evaluator="deferred"))
    (candidate,) = state["pending"]
    assert candidate["left"] == ["r2"] and not candidate["local_ok"]
    assert list(candidate["bodies"]) == ["r0"] and [r["id"] for r in candidate["regions"]] == ["r0"]
    _documented([candidate])


def test_a_candidate_whose_every_body_failed_still_goes_to_the_gpu(scripted, task) -> None:
    """With nothing left to judge the failed bodies are sent: the GPU's words on them are the feedback."""
    scripted(lambda messages, kwargs: "```cuda\nfloat t1 = A * scale_factor;\n```")
    state = compile_graph("zero_shot").invoke({"task": task}, context=Context(evaluator="deferred"))
    (candidate,) = state["pending"]
    assert candidate["left"] == [] and list(candidate["bodies"]) == ["r0"] and not candidate["local_ok"]


def test_aggressive_ambition_asks_for_a_product_with_its_epilogue_in_one_kernel(
    scripted, kernelbench_dir: Path
) -> None:
    """Level 2's problem 9 (linear, subtract, multiply, relu) is one fused region at aggressive ambition:
    one prompt, one kernel that computes `result` and then the epilogue, one region judged alone."""
    body = (
        "float acc = 0.0f;\nfor (int64_t k = 0; k < K; ++k) acc += x(k) * linear_weight(k);\n"
        "result = acc + linear_bias[j];\nfloat t1 = result - 2.0f;\nfloat t2 = t1 * 1.5f;\n"
        "float t3 = kg_relu(t2);"
    )
    model = scripted(lambda m, kw: f"```cuda\n{body}\n```")
    task = problem_to_dict(load_problem(kernelbench_dir / "level2/9_Matmul_Subtract_Multiply_ReLU.py"))
    state, seen = _zero_shot_judged_right(task, Context(ambition="aggressive"))
    (prompt,) = [c[0][-1]["content"] for c in model.calls]
    assert "result = torch.nn.functional.linear(x, linear_weight, linear_bias)\nt1 = result - 2.0" in prompt
    assert state["best"]["local_ok"] and state["best"]["bodies"] == {"r0": body}
    (region,) = seen[0]["regions"]
    ops = [s["target"].rsplit(".", 1)[-1] for s in region["spec"]["steps"]]
    assert ops == ["linear", "sub", "mul", "relu"]


@pytest.mark.parametrize("tiles_ok", [True, False])
def test_fast_second_moves_a_correct_product_onto_the_tiles_the_model_chose(
    scripted, kernelbench_dir: Path, tiles_ok: bool
) -> None:
    """Round 0 writes the product per element, and it runs there (launch first); in round 1's fast second
    the model chooses the tiled shape, and its body runs there unchanged (no rewrite); round 2 asks the
    model for a faster body on the tiles if they were right, and repairs on the first contract if the GPU
    found them wrong."""
    body = "result = 0.0f;\nfor (int64_t k = 0; k < K; ++k) result += A(k) * B(k);"
    model = choosing(scripted(lambda m, kw: f"```cuda\n{body}\n```"), "tiled")
    task = problem_to_dict(load_problem(kernelbench_dir / "level1/1_Square_matrix_multiplication_.py"))

    def judge(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        on_tiles = ["block=(16, 16, 1)" in j["code"] for j in jobs]
        return [
            _timed(j, ok=tiles_ok or not t, ms=2.0 if t else 4.0) for j, t in zip(jobs, on_tiles, strict=True)
        ]

    ctx = Context(rounds=3, stop_on="faster", launch="first")
    with EVALUATOR.use(judge):
        state = compile_graph("iterative_refinement").invoke({"task": task}, context=ctx)
    first, second = model.calls_for("generate")
    (choice,) = model.calls_for("shape")  # asked once: a region stays on its shape while it is right
    menu = choice[0][-1]["content"]
    assert "they take 4 ms per call" in menu and "- tiled: 2-D blocks" in menu and "- blocked: blocks" in menu
    assert "- first: keep the current launch and rewrite the lines to run faster (one thread per" in menu
    assert state["candidates"][0]["ruled"] == {}
    assert "tile_a" not in first[0][-1]["content"]
    assert ("tile_a" in second[0][-1]["content"]) is tiles_ok  # round 2: on the tiles, or back off them
    shapes = [c["shapes"] for c in state["candidates"]]
    assert shapes == ([{}, {"r0": "tiled"}, {"r0": "tiled"}] if tiles_ok else [{}, {"r0": "tiled"}, {}])
    assert ("block=(16, 16, 1)" in state["best"]["code"]) is tiles_ok
    _documented(state["candidates"])


def test_fast_second_keeps_a_product_on_its_ruled_launch_and_asks_for_faster_lines(
    scripted, kernelbench_dir: Path
) -> None:
    """A product body ran on its ruled register-blocked shape: the fast second offers no move (the other
    shapes that fit were measured slower) and asks for faster lines, which run on that shape again."""
    loop = "for (int64_t k = 0; k < K; ++k) "
    bodies = iter(
        f"```cuda\n{loop}{step}\n```"
        for step in ("result += A(k) * B(k);", "result = fmaf(A(k), B(k), result);")
    )
    model = choosing(scripted(lambda m, kw: next(bodies)), "tiled")
    task = problem_to_dict(load_problem(kernelbench_dir / "level1/1_Square_matrix_multiplication_.py"))
    ctx = Context(rounds=2, stop_on="faster", emulate=False)
    with EVALUATOR.use(lambda jobs: [_timed(j, ok=True, ms=2.0) for j in jobs]):
        state = compile_graph("iterative_refinement").invoke({"task": task}, context=ctx)
    assert not model.calls_for("shape")
    _, second = model.calls_for("generate")
    assert "You make one CUDA kernel faster" in second[0][0]["content"]
    assert [c["ruled"] for c in state["candidates"]] == [{"r0": "blocked"}] * 2
    assert "fmaf" in state["candidates"][1]["code"] and "block=(256, 1, 1)" in state["candidates"][1]["code"]
    (why,) = [c["why"] for c in state["candidates"][1]["shape_choices"].values()]
    assert why == "it runs on its ruled launch, blocked; the lines are rewritten"


def test_a_body_that_does_not_move_is_rewritten_for_the_chosen_shape(scripted, kernelbench_dir: Path) -> None:
    """A correct product body that reads `p_A` itself cannot run per tile; the model chose tiles, so it
    rewrites its lines against the tiled contract, and the candidate runs there."""
    per_element = "for (int64_t k = 0; k < K; ++k) result += p_A[m * K + k] * B(k);"
    per_tile = "for (int64_t k = 0; k < K; ++k) result += A(k) * B(k);"
    bodies = iter([per_element, per_tile])
    model = choosing(scripted(lambda m, kw: f"```cuda\n{next(bodies)}\n```"), "tiled")
    task = problem_to_dict(load_problem(kernelbench_dir / "level1/1_Square_matrix_multiplication_.py"))
    ctx = Context(rounds=2, stop_on="faster")
    with EVALUATOR.use(lambda jobs: [_timed(j, ok=True, ms=2.0) for j in jobs]):
        state = compile_graph("iterative_refinement").invoke({"task": task}, context=ctx)
    _, rewrite = model.calls_for("generate")
    assert (
        "You make one CUDA kernel faster" in rewrite[0][0]["content"]
        and "tile_a" in rewrite[0][-1]["content"]
    )
    second = state["candidates"][1]
    assert second["shapes"] == {"r0": "tiled"} and second["bodies"] == {"r0": per_tile}
    assert "block=(16, 16, 1)" in second["code"]


def test_studio_draws_the_steps_of_region_writing() -> None:
    """Region writing is a subgraph of generate: offer, the framework's own bodies, the shape choice, the
    model's answer, the local check, repairs and assembly are nodes Studio draws, with every route."""
    drawn = compile_graph("zero_shot").get_graph(xray=True)
    steps = {n.split(":", 1)[1] for n in drawn.nodes if n.startswith("generate:")}
    assert {"offer", "prepare", "shape", "write", "check", "repair", "assemble", "program"} <= steps
    edges = {(e.source.split(":")[-1], e.target.split(":")[-1]) for e in drawn.edges}
    assert {
        ("write", "check"),
        ("check", "repair"),
        ("repair", "check"),
        ("check", "prepare"),
        ("prepare", "write"),
        ("prepare", "shape"),
        ("offer", "program"),
    } <= edges
    program = compile_graph("zero_shot", format="program").get_graph(xray=True)
    assert not [n for n in program.nodes if n.startswith("generate:")]


def test_a_failed_answer_is_checked_and_repaired_step_by_step(task: dict[str, Any], scripted) -> None:
    """The first answer fails the local checks (an undefined name); the repair step answers again and the
    check step passes it: three model-facing steps, traced as such."""
    answers = iter(["float t1 = A * scale_factor;", "float t1 = A * s;"])
    scripted(lambda messages, kwargs: next(answers))
    steps: list[str] = []
    graph = compile_graph("zero_shot")
    chunks = graph.stream({"task": task}, context=Context(), stream_mode="updates", subgraphs=True)
    for namespace, chunk in chunks:
        if namespace:
            steps += list(chunk)
    assert steps[:6] == ["offer", "prepare", "write", "check", "repair", "check"]
    assert steps[-2:] == ["prepare", "assemble"]


def test_the_last_local_repair_asks_anew_without_the_broken_lines(task: dict[str, Any], scripted) -> None:
    """A repair shown its broken lines rewrites them (measured: the 1.5B repeated a call with too few
    arguments through every repair); after one failed repair the last asks anew, sampled, showing none."""
    answers = iter(["float t1 = A * scale_factor;", "float t1 = A * scale_factor2;", "float t1 = A * s;"])
    model = scripted(lambda messages, kwargs: next(answers))
    state = compile_graph("zero_shot").invoke({"task": task}, context=Context(evaluator="deferred"))
    writes = model.calls_for("generate")
    assert len(writes) == 3 and "scale_factor;" in writes[1][0][-1]["content"]
    assert "scale_factor" not in writes[2][0][-1]["content"] and writes[2][1]["temperature"] >= 0.7
    assert writes[2][0][-1]["content"] == writes[0][0][-1]["content"]  # the opening prompt itself
    assert "__interrupt__" in state


def test_wrong_values_are_repaired_on_the_cpu_before_any_gpu_judges_them(scripted, task) -> None:
    """The first answer compiles but computes the wrong numbers: the CPU emulation on the task shrunk says
    where, the repair is shown that and its lines, and the GPU judges only the repaired program."""
    replies = iter(["```cuda\nfloat t1 = A * s + 1.0f;\n```", "```cuda\nfloat t1 = A * s;\n```"])
    model = scripted(lambda m, kw: next(replies))
    seen: list[dict[str, Any]] = []

    def judge(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        seen.extend(jobs)
        return [_region_verdict(j, ok="+ 1.0f" not in j["code"]) for j in jobs]

    with EVALUATOR.use(judge):
        state = compile_graph("zero_shot").invoke({"task": task}, context=Context())
    writes = model.calls_for("generate")
    assert len(writes) == 2 and len(seen) == 1 and "+ 1.0f" not in seen[0]["code"]
    repair = writes[1][0][-1]["content"]
    assert "computes wrong values: out[" in repair and "PyTorch gives" in repair
    assert "float t1 = A * s + 1.0f;" in repair
    assert state["best"]["verdict"]["verdict"] == "correct" and state["best"]["local_ok"]


def test_a_third_round_asks_anew_instead_of_showing_the_body_judged_wrong_twice(scripted, task) -> None:
    replies = iter(f"```cuda\nfloat t1 = A * s + {k}.0f;\n```" for k in (1, 2, 3))
    model = scripted(lambda m, kw: next(replies))

    def judge(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [_region_verdict(j, ok=False) for j in jobs]

    ctx = Context(rounds=3, stop_on="correct", emulate=False)
    with EVALUATOR.use(judge):
        compile_graph("iterative_refinement").invoke({"task": task}, context=ctx)
    writes = [c[0][-1]["content"] for c in model.calls_for("generate")]
    assert len(writes) == 3 and "A * s + 1.0f" in writes[1]  # round 2 repairs what the GPU judged
    assert "A * s + 2.0f" not in writes[2] and writes[2] == writes[0]  # round 3 asks anew


def test_a_body_judged_wrong_and_written_again_is_not_judged_again(scripted, task) -> None:
    """Round 1 repairs the region the GPU judged wrong; the model writes the same lines again (a comment
    aside) every time. Each is refused before any GPU sees it, the repairs ask anew without the old lines,
    and the program that comes out, the one already judged, takes its verdict without a second run."""
    wrong = "float t1 = A * s + 1.0f;"
    model = scripted(lambda m, kw: f"```cuda\n{wrong}  // fixed\n```")
    seen: list[dict[str, Any]] = []

    def judge(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        seen.extend(jobs)
        return [_region_verdict(j, ok=False) for j in jobs]

    ctx = Context(rounds=2, stop_on="correct", emulate=False)
    with EVALUATOR.use(judge):
        state = compile_graph("iterative_refinement").invoke({"task": task}, context=ctx)
    first, second = state["candidates"]
    assert len(seen) == 1 and second["code"] == first["code"]
    assert second["verdict"]["reused_verdict_of"] == first["id"] == "r0s0"
    assert second["verdict"]["verdict"] == "wrong_output" and not second["local_ok"]
    writes = model.calls_for("generate")
    assert len(writes) == 4  # round 0, then round 1's repair and its two sampled retries
    assert "A * s + 1.0f" in writes[1][0][-1]["content"]  # the repair shows the lines the GPU judged
    for retry, kwargs in writes[2:]:
        assert (
            "A * s + 1.0f" not in retry[-1]["content"]
            and "your last answer repeated it" in retry[-1]["content"]
        )
        assert kwargs["temperature"] >= 0.7
    evaluated = [e for e in state["events"] if e["node"] == "evaluate"]
    assert evaluated[-1]["outputs"]["not_judged_again"] == {"r1s0": "r0s0"}


@pytest.mark.parametrize("launch", ["ruled", "first"])
def test_the_framework_runs_a_body_on_its_ruled_shape_unless_told_first(
    scripted, kernelbench_dir: Path, launch: str
) -> None:
    """The model writes against the first contract (the one the CPU emulation runs); the program runs the
    body on the product's ruled shape, register-blocked here, unless `launch` is first."""
    body = "result = 0.0f;\nfor (int64_t k = 0; k < K; ++k) result += A(k) * B(k);"
    model = scripted(lambda m, kw: f"```cuda\n{body}\n```")
    task = problem_to_dict(load_problem(kernelbench_dir / "level1/1_Square_matrix_multiplication_.py"))
    ctx = Context(rounds=1, launch=launch, emulate=False)
    with EVALUATOR.use(lambda jobs: [_timed(j, ok=True, ms=2.0) for j in jobs]):
        state = compile_graph("zero_shot").invoke({"task": task}, context=ctx)
    (write,) = model.calls_for("generate")
    assert "kg_total" not in write[0][-1]["content"]  # the prompt is the first contract's
    (candidate,) = state["candidates"]
    assert candidate["ruled"] == ({"r0": "blocked"} if launch == "ruled" else {})
    assert ("block=(256, 1, 1)" in candidate["code"]) is (launch == "ruled") and candidate["shapes"] == {}


def test_autotune_writes_both_cuts_keeps_the_faster_and_refines_only_the_cut_that_won(
    scripted, kernelbench_dir: Path
) -> None:
    """Level 2's problem 9 is one fused product region at the aggressive cut and an epilogue map beside
    cuBLAS at the moderate one: autotune writes both (the rules' bodies here), each the program its own
    ambition writes, and select keeps the faster right one; the next round writes only that cut."""
    scripted(lambda m, kw: pytest.fail("the model was asked"))
    task = problem_to_dict(load_problem(kernelbench_dir / "level2/9_Matmul_Subtract_Multiply_ReLU.py"))

    def judge(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        sent.append([j["job_id"].rsplit("/", 1)[-1] for j in jobs])
        return [_timed(j, ok=True, ms=2.0 if j["job_id"].endswith("-moderate") else 4.0) for j in jobs]

    sent: list[list[str]] = []
    with EVALUATOR.use(judge):
        ctx = Context(ambition="autotune", writer="rules", rounds=2, stop_on="rounds")
        state = compile_graph("iterative_refinement").invoke({"task": task}, context=ctx)
    assert sent[0] == ["r0s0", "r0s0-moderate"]  # round 1's program is round 0's: its verdict is reused
    assert [c["id"] for c in state["candidates"] if c["round"] == 1] == ["r1s0-moderate"]
    first = {c["id"]: c for c in state["candidates"] if c["round"] == 0}
    assert {c["ambition"] for c in first.values()} == {"aggressive", "moderate"}
    assert state["best"]["id"] == "r0s0-moderate" and state["best"]["ambition"] == "moderate"
    for cut, cid in (("aggressive", "r0s0"), ("moderate", "r0s0-moderate")):
        alone, _ = _zero_shot_judged_right(task, Context(ambition=cut, writer="rules"))
        assert first[cid]["code"] == alone["best"]["code"]  # the cut's program, byte for byte
    assert first["r0s0"]["code"] != first["r0s0-moderate"]["code"]
    _documented(state["candidates"])


def test_autotune_writes_a_cut_once_where_both_offer_the_same_regions(scripted, task) -> None:
    """A matrix-scalar product is one map at either cut: the moderate branch writes nothing and says so."""
    model = scripted(lambda m, kw: "```cuda\nfloat t1 = A * s;\n```")
    state, seen = _zero_shot_judged_right(task, Context(ambition="autotune"))
    assert len(model.calls) == 1 and [c["id"] for c in state["candidates"]] == ["r0s0"]
    assert len(seen) == 1 and state["best"]["ambition"] == "aggressive"
    said = [e["outputs"] for e in state["events"] if e["node"] == "generate" and "same_as" in e["outputs"]]
    assert said == [{"ambition": "moderate", "same_as": "aggressive"}]
