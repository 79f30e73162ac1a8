"""Tracing on meta tensors and cutting into regions: the 30 shared KernelBench problems and the rules."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

from evaluator.problem import Problem, load_problem, load_problems, problem_from_source, shrink_problem
from regions.__main__ import main
from regions.model import Region, RegionError
from regions.partition import offer, partition
from regions.trace import Traced, graph_module, load_module, trace_problem

MODULES = """
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = nn.Linear(features, features)
        self.act = nn.LeakyReLU(0.1)
        self.clip = nn.Hardtanh(-1, 1)
        self.gelu = nn.GELU()
        self.softmax = nn.Softmax(dim=1)
        self.relu = nn.ReLU(inplace=True)
        self.scale = 0.5

    def forward(self, x, y):
        t = self.act(self.linear(x))
        u = self.clip(t) * self.scale
        v = self.gelu(u) + y
        w = self.softmax(v)
        s = w.sum(dim=1, keepdim=True)
        r = self.relu(v)
        return s + r.max() + (v - 1.0)

def get_inputs():
    return [torch.rand(8, 16), torch.rand(16)]

def get_init_inputs():
    return [16]
"""

CONTROL_FLOW = """
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        if x.sum().item() > 0:  # a Python number: no graph can hold this branch
            return x * 2
        return x

def get_inputs():
    return [torch.rand(4, 4)]

def get_init_inputs():
    return []
"""


@pytest.fixture(scope="module")
def shared(kernelbench_dir: Path) -> dict[tuple[int, int], tuple[Problem, Traced, list[Region]]]:
    """All 30 problems traced and partitioned once (meta tensors: seconds, whatever their sizes)."""
    out = {}
    for problem in load_problems(kernelbench_dir):
        traced = trace_problem(problem)
        out[(problem.level, problem.problem_id)] = (problem, traced, partition(traced))
    assert len(out) == 30
    return out


def _targets(region: Region) -> list[str]:
    return [step.target for step in region.steps]


def test_every_shared_problem_offers_one_region_of_the_expected_kind(shared: dict) -> None:
    for (level, pid), (_, traced, regions) in shared.items():
        offered = offer(regions)
        assert len(offered) == 1, (level, pid)
        kind = offered[0].kind
        if level == 1:
            assert kind == ("map" if pid == 5 else "contraction"), (pid, kind)
        if level == 2:
            assert kind in ("map", "reduce"), (pid, kind)
        assert [r.id for r in regions] == [f"r{i}" for i in range(len(regions))]
        covered = [name for r in regions for name in r.nodes]
        assert len(covered) == len(set(covered))
        assert regions[-1].output == traced.output


def test_no_step_renders_a_module_object(shared: dict) -> None:
    for _, traced, _ in shared.values():
        for step in traced.steps.values():
            assert "self." not in step.code and not re.search(r"\b[A-Z]\w*[a-z]\w*\(", step.code), step.code


def test_level1_matmul_is_a_contraction_costed_in_flops(shared: dict) -> None:
    _, traced, regions = shared[(1, 1)]
    (region,) = offer(regions)
    assert _targets(region) == ["torch.matmul"]
    assert [t.name for t in region.inputs] == ["A", "B"] and region.output.shape == (4096, 4096)
    assert region.cost == 2 * 4096**3


def test_level1_scalar_input_becomes_a_scalar_argument(shared: dict) -> None:
    _, traced, regions = shared[(1, 5)]
    assert traced.scalar_inputs == [("s", 3.14)] and [t.name for t in traced.inputs] == ["A"]
    (region,) = offer(regions)
    assert region.kind == "map" and region.scalars == [("s", 3.14)]
    assert [t.name for t in region.inputs] == ["A"] and region.steps[0].code == "t0 = A * s"


def test_level2_bias_clamp_scale_chain_is_one_map_region(shared: dict) -> None:
    _, traced, regions = shared[(2, 2)]
    maps = [r for r in regions if r.kind == "map"]
    assert len(maps) == 1 and offer(regions) == maps
    region = maps[0]
    # the transposed convolution's own bias first (regions.decompose.bias_apart), then the problem's
    assert _targets(region) == [
        "torch.add",
        "torch.add",
        "torch.clamp",
        "torch.mul",
        "torch.clamp",
        "torch.div",
    ]
    conv = next(r for r in regions if r.kind == "contraction")
    assert _targets(conv) == ["torch.nn.functional.conv_transpose2d"] and len(conv.inputs) == 2
    out = conv.output.name
    expected = [(out, conv.output.shape), ("conv_transpose_bias_view", (1, 64, 1, 1)), ("bias", (64, 1, 1))]
    assert [(t.name, t.shape) for t in region.inputs] == expected
    code = [s.code for s in region.steps]
    assert code[0].endswith(f"= {out} + conv_transpose_bias_view") and code[1].endswith(" + bias")
    assert "torch.clamp(" in code[2] and "min=0.0, max=1.0" in code[2]
    assert "2.0" in code[3] or region.scalars
    assert "conv_transpose_weight" in conv.steps[0].code and "stride=(2, 2)" in conv.steps[0].code


def test_level2_leaky_relu_keeps_its_negative_slope(shared: dict) -> None:
    _, _, regions = shared[(2, 7)]
    (region,) = offer(regions)
    leaky = next(s for s in region.steps if s.target == "torch.nn.functional.leaky_relu")
    assert "negative_slope=0.01" in leaky.code and ("negative_slope", 0.01) in leaky.kwargs
    assert _targets(region)[-1] == "torch.add" and region.inputs[-1].shape == (32, 1, 1, 1)


def test_training_batch_norm_is_a_mean_a_variance_and_a_map(shared: dict) -> None:
    _, _, regions = shared[(3, 8)]
    assert sum(_targets(r) == ["torch.mean"] for r in regions) == 3
    assert sum(_targets(r) == ["torch.var"] for r in regions) == 3
    assert not any("torch.nn.functional.batch_norm" in _targets(r) for r in regions)
    chosen = _targets(offer(regions)[0])  # both normalisations, the residual add and its relu: one map
    assert chosen.count("torch.rsqrt") == 2 and chosen[-2:] == ["torch.add", "torch.relu"]


def test_ambitions_widen_the_offer(shared: dict) -> None:
    _, _, regions = shared[(2, 3)]
    assert [r.kind for r in offer(regions, "moderate")] == ["map", "reduce", "window", "map"]
    assert [r.kind for r in offer(regions, "conservative")] == ["reduce"]  # windows: moderate on
    assert len(offer(regions, "aggressive")) == 5
    with pytest.raises(ValueError):
        offer(regions, "reckless")


def test_modules_render_as_functional_calls_with_their_arguments() -> None:
    traced = trace_problem(problem_from_source(MODULES, name="modules"))
    code = [s.code for s in traced.steps.values()]
    assert code[0] == "t0 = torch.nn.functional.linear(x, linear_weight, linear_bias)"
    assert code[1] == "t1 = torch.nn.functional.leaky_relu(t0, negative_slope=0.1)"
    assert code[2] == "t2 = torch.nn.functional.hardtanh(t1, min_val=-1.0, max_val=1.0)"
    assert code[4] == "t4 = torch.nn.functional.gelu(t3, approximate='none')"
    assert code[6] == "t6 = torch.softmax(t5, dim=1)"
    assert code[7] == "t7 = t6.sum(dim=1, keepdim=True)"
    assert [t.name for t in traced.params] == ["linear_weight", "linear_bias"]


def test_partition_chains_maps_and_keeps_inplace_ops_on_shared_tensors() -> None:
    regions = partition(trace_problem(problem_from_source(MODULES, name="modules")))
    assert [r.kind for r in regions] == ["contraction", "map", "reduce", "reduce", "kept", "reduce", "map"]
    chain = regions[1]
    assert len(chain.steps) == 5 and [t.name for t in chain.inputs] == ["t0", "y"]
    assert "inplace=True" in regions[4].steps[0].code  # relu_ on v, which is read again later
    assert [s.target for s in regions[6].steps] == ["torch.add", "torch.sub", "torch.add"]


SHARED_VALUES = """
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, a, b):
        d = (a - b).abs()
        small = torch.clamp_max(d, 0.5)
        loss = small * (d - 0.5 * small)  # d and small each read twice, all inside one pointwise DAG
        e = torch.exp(a)
        return loss.mean() + d.amax() + e.sum() + torch.tanh(e)

def get_inputs():
    return [torch.rand(8, 16), torch.rand(8, 16)]

def get_init_inputs():
    return []
"""


def test_a_pointwise_dag_is_one_map_and_values_read_outside_stay_outputs() -> None:
    regions = partition(trace_problem(problem_from_source(SHARED_VALUES, name="shared_values")))
    maps = [r for r in regions if r.kind == "map"]
    # `d` is read by a max as well: it stays an output; the loss's DAG reads it and is one map of four steps
    loss = next(r for r in maps if [s.target for s in r.steps][-1] == "torch.mul")
    assert [s.target for s in loss.steps] == ["torch.clamp_max", "torch.mul", "torch.sub", "torch.mul"]
    assert [s.target for s in maps[0].steps] == ["torch.sub", "torch.abs"]
    # exp(a) is read by a reduction and by tanh: a region's output, not fused into tanh's map
    exp = next(r for r in maps if r.steps[-1].target == "torch.exp")
    assert len(exp.steps) == 1


def test_a_branch_on_a_python_number_raises_with_a_reason() -> None:
    with pytest.raises(RegionError, match="branches fails: RuntimeError: .*item"):
        trace_problem(problem_from_source(CONTROL_FLOW, name="branchy"))


def test_a_broken_problem_raises_region_error() -> None:
    source = CONTROL_FLOW.replace("return []", "return [undefined_name]")
    with pytest.raises(RegionError, match="NameError"):
        trace_problem(problem_from_source(source, name="broken"))


def test_cli_shows_regions_and_exits_2_on_region_error(
    kernelbench_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = next((kernelbench_dir / "level2").glob("2_*.py"))
    assert main(["show", str(path)]) == 0
    out = capsys.readouterr().out
    assert "* r2 map" in out and "  r0 contraction" in out and "t2 = t1 + bias" in out
    assert "t6 = t5 / 2.0\n    launch shapes for the fast second: vector4" in out  # offered regions only
    assert "contract of" not in out
    assert main(["show", str(path), "--contract"]) == 0
    assert "# contract of r2\n## The PyTorch code this kernel computes" in capsys.readouterr().out
    bad = tmp_path / "branchy.py"
    bad.write_text(CONTROL_FLOW)
    assert main(["show", str(bad)]) == 2
    assert "branches fails" in capsys.readouterr().err


def test_the_graph_of_a_real_model_computes_the_reference(kernelbench_dir: Path) -> None:
    """A graph built from a real CPU model (as a GPU host would) has the meta trace's node names and its
    outputs, BatchNorm rewrite included."""
    problem = shrink_problem(next(iter(load_problems(kernelbench_dir / "level3", ids=[8]))), cap=8)
    module = load_module(problem)
    torch.manual_seed(42)
    model = module.Model(*module.get_init_inputs())
    inputs = module.get_inputs()
    gm = graph_module(model, inputs)
    names = [n.name for n in trace_problem(problem).gm.graph.nodes]
    assert [n.name for n in gm.graph.nodes] == names
    torch.manual_seed(0)
    expected = model(*inputs)
    torch.testing.assert_close(gm(*inputs), expected)


def test_threads_tracing_at_once_all_get_the_graph(kernelbench_dir: Path) -> None:
    """Best-of-n samples fan out in a thread pool and each traces its task: torch.fx's module patcher is
    process-wide, so unserialised traces broke each other and samples fell back to whole programs."""
    from concurrent.futures import ThreadPoolExecutor

    problem = next(iter(load_problems(kernelbench_dir / "level2", ids=[3])))

    def steps(_: int) -> int:
        return len(trace_problem(problem).steps)

    with ThreadPoolExecutor(8) as pool:
        counts = set(pool.map(steps, range(24)))
    assert len(counts) == 1


def test_a_mask_sized_by_the_input_traces_and_computes_the_model(families_dir: Path) -> None:
    """`torch.ones(t, t, device=x.device)` with t from x.shape, which fx alone cannot trace: the factory is a
    graph call while tracing, and torch's own again after."""
    module = load_module(load_problem(families_dir / "level3/6_Transformer_Block_Small.py"))
    torch.manual_seed(0)
    model = module.Model(*module.get_init_inputs()).eval()
    inputs = module.get_inputs()
    gm = graph_module(model, inputs)
    assert any(node.target is torch.ones for node in gm.graph.nodes)
    torch.testing.assert_close(gm(*inputs), model(*inputs))
    assert not hasattr(torch.ones, "kg_original")
