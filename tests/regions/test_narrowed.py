"""A region narrowed on its own gives the CPU a twin where sizes written into get_inputs or the layers keep
the problem's shrink from reaching it: right bodies pass on it, a wrong stride does not."""

from __future__ import annotations

from regions.contract import render
from regions.emulate import OWN_SIZE, TWIN_SIZE, small_twin, wrong_on_cpu
from regions.narrowed import narrowed_regions
from regions.offering import cut
from regions.reduce import LONG_SUM
from regions.rules import rule_body
from regions.trace import trace_source

# no module-level size: the problem's shrink leaves every size as it is
CONV = """import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(16, 32, 3, padding=1)

    def forward(self, x, skip):
        return torch.relu(self.conv(x) + skip)

def get_inputs():
    return [torch.rand(8, 16, 96, 96), torch.rand(8, 32, 96, 96)]

def get_init_inputs():
    return []
"""

LINEAR = """import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8192, 6000)

    def forward(self, x):
        return self.fc(x)

def get_inputs():
    return [torch.rand(64, 8192)]

def get_init_inputs():
    return []
"""

STRIDED = (
    CONV.replace("nn.Conv2d(16, 32, 3, padding=1)", "nn.Conv2d(16, 32, 11, stride=4, padding=2)")
    .replace("def forward(self, x, skip):", "def forward(self, x):")
    .replace("torch.relu(self.conv(x) + skip)", "self.conv(x)")
    .replace("[torch.rand(8, 16, 96, 96), torch.rand(8, 32, 96, 96)]", "[torch.rand(8, 16, 96, 96)]")
)

# the wrong body the GPU caught on a Conv3d (benchmarks/results/autotune_interleaved), in two dimensions
# and without its bias (the moderate cut adds it after): the input read through a raw pointer, its sides
# and channels mixed up
RAW_POINTER = """result = 0.0f;
for (int64_t c = 0; c < C; ++c) {
    const float* w = p_conv_weight + o * C * K0 * K1;
    const float* xs = p_x + b * 3 * C + c * 16 + p0 * 1 + p1 * 1;
    for (int64_t k0 = 0; k0 < K0; ++k0)
        for (int64_t k1 = 0; k1 < K1; ++k1) result += xs[k0 * K1 + k1] * w[k0 * K1 + k1];
}"""


def _core(source: str, ambition: str = "moderate"):
    return next(r for r in cut(trace_source(source), ambition) if r.kind == "contraction")


def test_a_convolution_sized_in_get_inputs_gets_a_narrowed_twin() -> None:
    region = _core(CONV)
    assert region.cost > TWIN_SIZE  # neither its own size nor the problem's shrink reaches it
    twin, contract = small_twin(CONV, region)
    x, weight = (t.shape for t in twin.inputs[:2])
    assert weight == (32, 16, 3, 3) and x[:2] == (2, 16) and max(x[2:]) < 96  # channels and kernel kept
    assert twin.cost <= TWIN_SIZE
    assert wrong_on_cpu((twin, contract), rule_body(twin, contract)) == ""
    wrong = wrong_on_cpu((twin, contract), RAW_POINTER)
    assert wrong and wrong.startswith("out[")


def test_an_input_of_the_output_shape_follows_the_output() -> None:
    region = _core(CONV, "aggressive")
    assert len(region.steps) > 1  # the sum with `skip` and the ReLU fused after the convolution
    twin = next(narrowed_regions(region))
    skip = next(t for t in twin.inputs if t.name == "skip")
    assert skip.shape == twin.output.shape != region.output.shape
    bias = next(t.shape for t in region.inputs if "bias" in t.name)
    assert bias == (1, 32, 1, 1) == next(t.shape for t in twin.inputs if "bias" in t.name)  # per channel


def test_a_linear_layer_keeps_its_long_sum() -> None:
    region = _core(LINEAR)
    twin, contract = small_twin(LINEAR, region)
    x, weight, bias = (t.shape for t in twin.inputs)
    assert x[-1] == weight[-1] == 8192 > LONG_SUM  # the double sum its skeleton declares stays
    assert weight[0] == bias[0] == twin.output.shape[-1] < 6000
    assert wrong_on_cpu((twin, contract), rule_body(twin, contract)) == ""


def test_every_output_dim_keeps_two_indices() -> None:
    region = _core(STRIDED)
    twin = next(narrowed_regions(region))
    assert all(d > 1 for d in twin.output.shape)  # an 11 x 11 kernel of stride 4 on a side of 4 gives 1


def test_a_map_follows_its_widest_input_and_a_named_size_stays() -> None:
    maps = [r for r in cut(trace_source(CONV), "moderate") if r.kind == "map"]
    assert maps  # the bias, the sum with `skip` and the ReLU after the convolution
    twin = next(narrowed_regions(maps[0]))
    shapes = {t.name: t.shape for t in twin.inputs}
    assert shapes["skip"] == twin.output.shape and twin.output.shape[0] == 2
    bias = next(shape for name, shape in shapes.items() if "bias" in name)
    assert bias == (1, twin.output.shape[1], 1, 1)  # per channel, its channels narrowed with the output's
    assert wrong_on_cpu((twin, render(twin)), rule_body(twin, render(twin))) == ""
    norm = CONV.replace(
        "torch.relu(self.conv(x) + skip)", "torch.nn.functional.layer_norm(skip, (32, 96, 96))"
    )
    region = next(r for r in cut(trace_source(norm), "moderate") if r.steps[0].target.endswith("layer_norm"))
    twins = list(narrowed_regions(region))  # its step names the sizes it normalises over: those stay
    assert twins and all(t.inputs[0].shape == (2, 32, 96, 96) for t in twins)
    assert _core(CONV.replace("96, 96", "6, 6")).cost <= OWN_SIZE  # a small one runs at its own size
