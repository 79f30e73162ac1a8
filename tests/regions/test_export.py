"""Export: the region kernel as a standalone KernelBench-format program. On the CPU the extension is
stood in for by the region's own PyTorch steps, so the test checks everything but the kernel: the graph
surgery, the adopted parameters, the call and its arguments, and that the evaluator's static checks
accept the program."""

from __future__ import annotations

import ast
import types
from pathlib import Path
from typing import Any

import pytest
import torch

from evaluator import static_checks
from evaluator.problem import Problem, load_problem, shrink_problem
from regions.contract import render
from regions.export import Written, export_program
from regions.model import RegionError
from regions.partition import offer, partition
from regions.trace import load_module, trace_problem

CASES = [
    "level1/5_Matrix_scalar_multiplication.py",  # a scalar forward input
    "level2/2_ConvTranspose2d_BiasAdd_Clamp_Scaling_Clamp_Divide.py",  # a broadcast parameter
    "level3/8_ResNetBasicBlock.py",  # batch norm, a Sequential child, the residual add
]


def _exported(kernelbench_dir: Path, case: str) -> tuple[Problem, Any, Any, str]:
    problem = shrink_problem(load_problem(kernelbench_dir / case), cap=8)
    (region,) = offer(partition(trace_problem(problem)), "conservative")
    contract = render(region)
    return problem, region, contract, export_program(problem, [Written(region, contract, "float t1 = 0.0f;")])


def _stand_in(region: Any) -> types.SimpleNamespace:
    """The extension, computed by the region's PyTorch steps (inputs, then scalars, as the call passes)."""
    names = [t.name for t in region.inputs] + [s for s, _ in region.scalars]

    def launch(*args: Any) -> torch.Tensor:
        scope: dict[str, Any] = {"torch": torch, **dict(zip(names, args, strict=True))}
        for step in region.steps:
            exec(step.code, scope)  # noqa: S102 - the test's own, framework-written PyTorch lines
        return scope[region.steps[-1].out.name]

    return types.SimpleNamespace(**{f"region_{region.id}_launch": launch})


def _same_outputs(problem: Problem, model_new: type) -> tuple[torch.nn.Module, torch.nn.Module]:
    """Build the reference and ModelNew as a harness does (seed 42 before each) and assert one input gives
    the same output; both models, for further checks."""
    reference = load_module(problem)
    torch.manual_seed(42)
    ref_model = reference.Model(*reference.get_init_inputs())
    torch.manual_seed(42)
    new_model = model_new(*reference.get_init_inputs())
    torch.manual_seed(0)
    inputs = reference.get_inputs()
    with torch.no_grad():
        assert torch.allclose(ref_model(*inputs), new_model(*inputs), atol=1e-5, rtol=1e-5)
    return ref_model, new_model


@pytest.mark.parametrize("case", CASES)
def test_exported_model_matches_the_reference_with_the_region_stood_in(
    kernelbench_dir: Path, case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    problem, region, contract, source = _exported(kernelbench_dir, case)
    assert static_checks.check_candidate(source, problem.source) == []
    built: dict[str, Any] = {}

    def load_inline(**kwargs: Any) -> types.SimpleNamespace:
        built.update(kwargs)
        return _stand_in(region)

    monkeypatch.setattr("torch.utils.cpp_extension.load_inline", load_inline)
    candidate: dict[str, Any] = {}
    exec(compile(source, "<exported>", "exec"), candidate)  # noqa: S102
    assert built["functions"] == [f"{contract.kernel_name}_launch"]
    assert contract.signature in built["cuda_sources"] and "float t1 = 0.0f;" in built["cuda_sources"]
    ref_model, new_model = _same_outputs(problem, candidate["ModelNew"])
    assert sum(p.numel() for p in new_model.parameters()) == sum(p.numel() for p in ref_model.parameters())


@pytest.mark.parametrize("case", ["level3/8_ResNetBasicBlock.py", "level3/1_MLP.py"])
def test_every_region_moderate_ambition_offers_is_spliced_into_one_program(
    kernelbench_dir: Path, case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two regions, two extensions, one forward: each region's call reads the graph as spliced so far."""
    problem = shrink_problem(load_problem(kernelbench_dir / case), cap=8)
    regions = offer(partition(trace_problem(problem)), "moderate")
    assert len(regions) >= 2
    source = export_program(problem, [Written(r, render(r), "float t1 = 0.0f;") for r in regions])
    assert static_checks.check_candidate(source, problem.source) == []
    by_name = {f"kg_{r.id}_": r for r in regions}
    built: list[str] = []

    def load_inline(**kwargs: Any) -> types.SimpleNamespace:
        built.append(kwargs["name"])
        return _stand_in(next(r for prefix, r in by_name.items() if kwargs["name"].startswith(prefix)))

    monkeypatch.setattr("torch.utils.cpp_extension.load_inline", load_inline)
    candidate: dict[str, Any] = {}
    exec(compile(source, "<exported>", "exec"), candidate)  # noqa: S102
    assert len(built) == len(regions)
    _same_outputs(problem, candidate["ModelNew"])
    with pytest.raises(RegionError, match="not in the traced graph"):
        export_program(problem, [Written(regions[0], render(regions[0]), "")] * 2)


BODIES = {
    CASES[0]: "float t1 = A * s;",
    CASES[1]: "float t1 = t0 + conv_transpose_bias_view;\nfloat t2 = t1 + bias;\n"
    "float t3 = kg_clamp(t2, 0.0f, 1.0f);\nfloat t4 = t3 * 2.0f;\nfloat t5 = kg_clamp(t4, 0.0f, 1.0f);\n"
    "float t6 = t5 / 2.0f;",
    "level2/6_Conv3d_Softmax_MaxPool_MaxPool.py": "float m = -INFINITY;\n"
    "for (int64_t k = 0; k < R; ++k) m = fmaxf(m, t0(k));\nfloat s = 0.0f;\n"
    "for (int64_t k = 0; k < R; ++k) s += expf(t0(k) - m);\n"
    "for (int64_t k = 0; k < R; ++k) out(k) = expf(t0(k) - m) / s;",
    "level1/2_Standard_matrix_multiplication_.py": "for (int64_t k = 0; k < K; ++k) result += A(k) * B(k);",
}


def _region_job(kernelbench_dir: Path, case: str, body: str, launcher: str) -> Any:
    from evaluator.jobs import Job
    from regions.export import region_markers

    problem = load_problem(kernelbench_dir / case)
    (region,) = offer(partition(trace_problem(problem)), "conservative")
    written = [Written(region, render(region), body)]
    source = export_program(problem, written, launcher)  # type: ignore[arg-type]
    markers = region_markers(written) if launcher == "nvrtc" else None
    return Job(f"{case}:{launcher}", problem, source, code=source, extracted=True, regions=markers)


@pytest.mark.gpu
@pytest.mark.parametrize("launcher", ["load_inline", "nvrtc"])
@pytest.mark.parametrize("case", sorted(BODIES))
def test_exported_region_kernels_are_strictly_correct_on_the_gpu(
    kernelbench_dir: Path, case: str, launcher: str, eval_cache: Path
) -> None:
    """Hand-written bodies through the whole export, judged by the evaluator at KernelBench's sizes: the
    KernelBench program (an nvcc build) and the region kind (NVRTC, with the per-region check)."""
    from evaluator.api import evaluate_many
    from evaluator.config import EvalConfig

    job = _region_job(kernelbench_dir, case, BODIES[case], launcher)
    config = EvalConfig(backend="cuda", cache_dir=str(eval_cache), reference_compile="off", timing_trials=20)
    (verdict,) = evaluate_many([job], config)
    assert verdict["verdict"] == "correct", (verdict["evidence"], verdict["log_tail"][-2000:])
    assert verdict["evidence"]["custom"]["replaced"]
    if launcher == "nvrtc":
        assert [b.get("kind") for b in verdict["evidence"]["builds"]] == ["nvrtc"]
        assert [r["verdict"] for r in verdict["evidence"]["regions"]] == ["correct"], verdict["evidence"]


@pytest.mark.gpu
def test_a_wrong_region_kernel_is_named_with_its_first_wrong_element(
    kernelbench_dir: Path, eval_cache: Path
) -> None:
    """Softmax without its max shift's partner: the region check names the element, expected and got."""
    from evaluator.api import evaluate_many
    from evaluator.config import EvalConfig

    case = "level2/6_Conv3d_Softmax_MaxPool_MaxPool.py"
    body = BODIES[case].replace("/ s;", "/ (s + 1.0f);")
    job = _region_job(kernelbench_dir, case, body, "nvrtc")
    config = EvalConfig(backend="cuda", cache_dir=str(eval_cache), reference_compile="off", timing_trials=5)
    (verdict,) = evaluate_many([job], config)
    assert verdict["verdict"] == "wrong_output"
    (region,) = verdict["evidence"]["regions"]
    assert region["verdict"] == "wrong_output" and region["reason"] == "values"
    assert len(region["first_mismatch_index"]) == len(job.regions[0]["spec"]["output"]["shape"])
    assert region["first_mismatch"]["expected"] != region["first_mismatch"]["got"]


@pytest.mark.parametrize("case", sorted(BODIES))
def test_the_region_kind_program_compiles_with_nvrtc_as_it_loads(
    kernelbench_dir: Path, case: str, tmp_path: Path
) -> None:
    """The region kind's program on this CPU host: static checks accept it, the evaluator starts no build
    worker for it (nothing to build ahead), and loading it in a worker process compiles its kernel with the
    real NVRTC (recorded as an nvrtc build), as the run worker's load does."""
    from evaluator import api, sandbox
    from evaluator.config import EvalConfig

    job = _region_job(kernelbench_dir, case, BODIES[case], "nvrtc")
    assert not static_checks.rejected(static_checks.check_candidate(job.code, job.problem.source))
    config = EvalConfig(backend="cpu", cache_dir=str(tmp_path))
    state = api._State(job, config, workers=sandbox.WorkerGroup())
    assert api._prepare(state) is None and state.build is None
    loaded = sandbox.run_worker(
        "build", {"candidate": job.code, "config": config.to_dict(), "arch": ""}, 300, api._env(config, True)
    )
    built = loaded.result
    assert built["build_error"] is None and built["module_error"] is None, built
    assert [(b["kind"], b["ok"]) for b in built["builds"]] == [("nvrtc", True)]
    assert built["kernel_names"] == [
        render(offer(partition(trace_problem(job.problem)), "conservative")[0]).kernel_name
    ]


def test_a_region_kernel_that_does_not_compile_is_a_compile_error_with_the_nvrtc_log(
    kernelbench_dir: Path, tmp_path: Path
) -> None:
    from evaluator.api import evaluate_many
    from evaluator.config import EvalConfig

    case = "level1/5_Matrix_scalar_multiplication.py"
    job = _region_job(kernelbench_dir, case, "float t1 = A * undefined_scale;", "nvrtc")
    (verdict,) = evaluate_many([job], EvalConfig(backend="cpu", cache_dir=str(tmp_path)))
    assert verdict["verdict"] == "compile_error"
    assert 'identifier "undefined_scale" is undefined' in verdict["log_tail"]


@pytest.mark.parametrize("case", sorted(BODIES))
def test_the_gpu_suites_bodies_pass_the_local_checks(kernelbench_dir: Path, case: str) -> None:
    from regions.check import check

    (region,) = offer(partition(trace_problem(load_problem(kernelbench_dir / case))), "conservative")
    checked = check(render(region), BODIES[case])
    assert checked.ok, checked.errors


ESCAPES = [
    '// a comment that closes the literal: """ + str(__import__("os").getpid()) + r"""',
    '// a raw string\'s end: """ and a backslash at the end \\',
    'float t1 = 0.0f; // "quoted", \\n, \\\\ and a lone quote at the end "',
]


@pytest.mark.parametrize("launcher", ["load_inline", "nvrtc"])
@pytest.mark.parametrize("body", ESCAPES)
def test_model_text_stays_inside_its_string_literal(kernelbench_dir: Path, launcher: str, body: str) -> None:
    """Whatever the body holds, the program's only trace of it is the kernel source constant, whose value
    is the kernel exactly: the model's text never becomes Python."""
    problem = shrink_problem(load_problem(kernelbench_dir / CASES[0]), cap=8)
    (region,) = offer(partition(trace_problem(problem)), "conservative")
    contract = render(region)
    program = export_program(problem, [Written(region, contract, body)], launcher)
    plain = export_program(problem, [Written(region, contract, "float t1 = 0.0f;")], launcher)
    tree, plain_tree = ast.parse(program), ast.parse(plain)
    assert [type(n) for n in tree.body] == [type(n) for n in plain_tree.body]  # no statement added
    assigns = [n for n in tree.body if isinstance(n, ast.Assign)]
    (constant,) = [n for n in assigns if "_KG_CUDA" in ast.unparse(n.targets[0])]
    source = ast.literal_eval(constant.value)  # a plain string: no expression around or inside it
    assert body in source
    if launcher == "nvrtc":
        assert source == "\n" + contract.assemble(body)


def test_an_index_reduction_exports_an_int64_output(families_dir: Path) -> None:
    """argmax writes int64 indices: the load_inline host function allocates and passes an int64 output, the
    NVRTC loader is told its dtype; every other region keeps float32 (no dtype argument at all)."""

    problem = load_problem(families_dir / "level1/6_Argmax_Over_Channels.py")
    (region,) = offer(partition(trace_problem(problem)), "conservative")
    written = [Written(region, render(region), "index = 0;")]
    inline = export_program(problem, written, "load_inline")
    assert "out.data_ptr<int64_t>()" in inline and ".dtype(torch::kLong)" in inline
    assert 'output_dtype="int64"' in export_program(problem, written, "nvrtc")
    assert static_checks.check_candidate(inline, problem.source) == []
    other = export_program(*_plain_written(families_dir))
    assert "output_dtype" not in other and "data_ptr<int64_t>" not in export_program(
        *_plain_written(families_dir), "load_inline"
    )


def _plain_written(families_dir: Path) -> tuple[Problem, list[Written]]:

    problem = load_problem(families_dir / "level1/18_Selu_Activation.py")
    (region,) = offer(partition(trace_problem(problem)), "conservative")
    return problem, [Written(region, render(region), "float t1 = kg_selu(x);")]


EINOPS = """
import torch
import torch.nn as nn
from einops import rearrange


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(rearrange(x, "b (h d) -> b h d", h=4)) * 2.0


def get_inputs():
    return [torch.randn(3, 8)]


def get_init_inputs():
    return []
"""


def test_an_einops_call_is_kept_whole_and_imported_by_the_program(monkeypatch: pytest.MonkeyPatch) -> None:
    """einops cannot read fx's proxies: its calls are graph nodes PyTorch evaluates, and the program
    imports them under the names fx's code gives them."""
    from evaluator.problem import problem_from_source

    problem = problem_from_source(EINOPS, name="einops_view")
    (region,) = offer(partition(trace_problem(problem)), "moderate")
    assert [s.target for s in region.steps] == ["torch.relu", "torch.mul"]
    source = export_program(problem, [Written(region, render(region), "float t1 = 0.0f;")])
    assert "from einops.einops import rearrange as einops_einops_rearrange" in source
    assert "_symbolic_trace.wrap" not in source
    assert static_checks.check_candidate(source, problem.source) == []
    monkeypatch.setattr("torch.utils.cpp_extension.load_inline", lambda **kwargs: _stand_in(region))
    candidate: dict[str, Any] = {}
    exec(compile(source, "<exported>", "exec"), candidate)  # noqa: S102
    _same_outputs(problem, candidate["ModelNew"])
