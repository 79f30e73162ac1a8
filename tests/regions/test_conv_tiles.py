"""The blocked convolution (regions.conv_tiles): a body written on the first contract runs unchanged on
slices of whole input channels, so the framework launches it as a register-blocked implicit product.
On the CPU the launch's blocks run as host threads that meet at __syncthreads (regions.emulate), on
small problems of every convolution the contract serves; on the GPU, the project's own conv tasks at
full size (benchmarks/conv_tasks)."""

from __future__ import annotations

from pathlib import Path

import pytest
from one_op import strictly_correct_on_gpu

from evaluator.problem import load_problem
from regions.conv_tiles import conv_blocked
from regions.emulate import emulate
from regions.export import Written
from regions.model import RegionError
from regions.offering import offered
from regions.rules import rule_body
from regions.shapes import CONV_BLOCKED, ruled_launch

CONV_TASKS = Path(__file__).resolve().parents[2] / "benchmarks" / "conv_tasks"

# (the module, the forward, the input's shape, the ambition): each convolution the shape serves
CASES = [
    ("nn.Conv2d(5, 64, 3, padding=1, bias=False)", "self.conv(x)", "2, 5, 9, 10", "moderate"),
    ("nn.Conv2d(6, 40, 3, stride=2, padding=1)", "self.conv(x)", "3, 6, 23, 21", "moderate"),
    ("nn.Conv1d(7, 130, 3, dilation=2)", "self.conv(x)", "2, 7, 80", "moderate"),
    ("nn.Conv3d(3, 36, 3, padding=1, bias=False)", "self.conv(x)", "1, 3, 5, 6, 7", "moderate"),
    (
        "nn.ConvTranspose2d(6, 33, 4, stride=2, padding=1, bias=False)",
        "self.conv(x)",
        "2, 6, 6, 7",
        "moderate",
    ),
    ("nn.Conv2d(8, 64, 3, padding=1, groups=2, bias=False)", "self.conv(x)", "2, 8, 8, 9", "moderate"),
    (
        "nn.ConvTranspose2d(8, 64, 3, stride=2, groups=2, bias=False)",
        "self.conv(x)",
        "2, 8, 5, 6",
        "moderate",
    ),
    # strided transposed ones wide enough to split by phase: uneven taps and positions a phase, 3-D, groups
    (
        "nn.ConvTranspose2d(6, 33, 4, stride=2, padding=1, bias=False)",
        "self.conv(x)",
        "3, 6, 9, 10",
        "moderate",
    ),
    (
        "nn.ConvTranspose2d(4, 32, (3, 4), stride=(3, 2), padding=(2, 1))",
        "self.conv(x)",
        "3, 4, 8, 9",
        "moderate",
    ),
    (
        "nn.ConvTranspose3d(3, 32, 3, stride=2, padding=1, output_padding=1)",
        "self.conv(x)",
        "1, 3, 6, 6, 7",
        "moderate",
    ),
    (
        "nn.ConvTranspose2d(8, 64, 3, stride=2, groups=2, bias=False)",
        "self.conv(x)",
        "2, 8, 9, 9",
        "moderate",
    ),
    ("nn.ConvTranspose1d(5, 32, 3, stride=2, dilation=2)", "self.conv(x)", "2, 5, 100", "moderate"),
    ("nn.Conv2d(4, 48, 3)", "torch.tanh(self.conv(x) * 0.5)", "2, 4, 10, 12", "aggressive"),
    ("nn.ConvTranspose2d(4, 40, 4, stride=2, padding=1)", "F.gelu(self.conv(x))", "2, 4, 6, 7", "aggressive"),
    (
        "nn.ConvTranspose2d(4, 40, 3, stride=2, padding=1)",
        "F.gelu(self.conv(x))",
        "3, 4, 9, 10",
        "aggressive",
    ),
    # few output channels: narrow tiles (16 and 32 rows; 20 rows on 32), split by phase, padded and
    # transposed, grouped, strided and dilated, fused
    NARROW_16 := ("nn.Conv3d(4, 16, 3)", "self.conv(x)", "2, 4, 6, 10, 10", "moderate"),
    NARROW_32 := ("nn.Conv2d(5, 32, 3, padding=1)", "torch.relu(self.conv(x))", "2, 5, 12, 12", "aggressive"),
    ("nn.Conv2d(3, 20, 3)", "self.conv(x)", "3, 3, 12, 12", "moderate"),
    ("nn.ConvTranspose2d(4, 32, 4, stride=2, padding=1)", "self.conv(x)", "3, 4, 10, 10", "moderate"),
    ("nn.ConvTranspose2d(4, 16, 3, padding=1)", "torch.relu(self.conv(x))", "3, 4, 10, 10", "aggressive"),
    ("nn.Conv2d(8, 32, 3, groups=2)", "self.conv(x)", "3, 8, 12, 12", "moderate"),
    ("nn.Conv1d(5, 24, 3, dilation=2, stride=2)", "self.conv(x)", "4, 5, 140", "moderate"),
    ("nn.Conv3d(3, 16, 3, stride=2)", "torch.sigmoid(self.conv(x)) * 2.0", "2, 3, 9, 18, 18", "aggressive"),
]
SPLIT = CASES[7]  # the first one split by phase


def _source(module: str, forward: str, shape: str) -> str:
    return (
        "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\nclass Model(nn.Module):\n"
        f"    def __init__(self):\n        super().__init__()\n        self.conv = {module}\n\n"
        f"    def forward(self, x):\n        return {forward}\n\n\n"
        f"def get_inputs():\n    return [torch.randn({shape})]\n\n\ndef get_init_inputs():\n    return []\n"
    )


def _conv(source: str, ambition: str):
    """The problem's one convolution region (fused with its epilogue at aggressive) and its first
    contract."""
    (part,) = [(r, c) for r, c in offered(source, ambition)[0] if r.kind == "contraction"]
    return part


@pytest.mark.parametrize("module, forward, shape, ambition", CASES)
def test_the_rules_body_moves_to_the_blocked_convolution_and_computes_it(
    module: str, forward: str, shape: str, ambition: str
) -> None:
    region, first = _conv(_source(module, forward, shape), ambition)
    body = rule_body(region, first)
    ruled = ruled_launch(region, body)
    assert ruled is not None and ruled[0] == CONV_BLOCKED
    blocks = ruled[1].launch["grid"]
    assert blocks[0] * blocks[1] * blocks[2] > 1  # several blocks, each staging its own slices
    emulated = emulate(region, ruled[1], body)
    assert emulated.ok, emulated.error


def test_a_body_that_skips_a_channel_of_each_slice_is_caught_on_the_cpu() -> None:
    region, first = _conv(_source(*CASES[0][:3]), "moderate")
    wrong = rule_body(region, first).replace("c < C", "c < C - 1")
    assert not emulate(region, conv_blocked(region), wrong).ok


@pytest.mark.parametrize(
    "case, phases, taps",
    [(SPLIT, 4, "K0 = 2, K1 = 2"), (CASES[8], 6, "K0 = 1, K1 = 2"), (CASES[9], 8, "K0 = 2, K1 = 2, K2 = 2")],
)
def test_a_strided_transposed_convolution_sums_only_its_phases_taps(
    case: tuple[str, ...], phases: int, taps: str
) -> None:
    """Each phase of the stride is its own blocks (the grid's third dimension), and K holds the phase's
    taps alone: a filter of 4 with stride 2 sums 2 taps a dimension."""
    region, _ = _conv(_source(*case[:3]), case[3])
    contract = conv_blocked(region)
    assert contract.launch["grid"][2] == phases and f"const int64_t {taps};" in contract.head


@pytest.mark.parametrize("loop", ["c < C", "k0 < K0"])
def test_a_body_that_skips_a_channel_or_a_tap_of_a_phase_is_caught_on_the_cpu(loop: str) -> None:
    region, first = _conv(_source(*SPLIT[:3]), SPLIT[3])
    body = rule_body(region, first)
    assert loop in body
    assert not emulate(region, conv_blocked(region), body.replace(loop, f"{loop} - 1")).ok


def test_a_body_that_bounds_its_loops_by_numbers_keeps_the_first_contract() -> None:
    """A slice's C is a few channels: a loop to the whole count (a number) would read past the slice."""
    region, first = _conv(_source(*CASES[0][:3]), "moderate")
    literal = rule_body(region, first).replace("c < C", "c < 5")
    assert ruled_launch(region, literal) is None


@pytest.mark.parametrize(
    "case, threads, sums, rows",
    [(NARROW_16, 64, "[4][4]", "constexpr int kg_dx[27]"), (NARROW_32, 32, "[4][8]", "int kg_xo[9]")],
    ids=["16", "32"],
)
def test_few_output_channels_get_a_narrow_tile_with_no_idle_rows(
    case: tuple[str, ...], threads: int, sums: str, rows: str
) -> None:
    """16 or 32 output channels: 4 a thread along the rows, the block's other threads along 256 columns,
    each staging a whole slice of its column: without padding, from the column's first input and each
    row's offset as a number (kg_dx), else from an offset a row (kg_xo)."""
    region, _ = _conv(_source(*case[:3]), case[3])
    contract = conv_blocked(region)
    assert f"kg_tx = threadIdx.x % {threads}," in contract.head and f"float kg_total{sums};" in contract.head
    assert rows in contract.head
    assert contract.launch["grid"][1] == 1  # one block's rows hold every output channel


def test_convolutions_too_narrow_for_a_blocks_tile_say_why() -> None:
    region, _ = _conv(_source("nn.Conv2d(4, 12, 3)", "self.conv(x)", "2, 4, 30, 30"), "moderate")
    with pytest.raises(RegionError, match="12 output channels a group"):
        conv_blocked(region)
    depthwise, _ = _conv(
        _source("nn.Conv2d(64, 64, 3, groups=64)", "self.conv(x)", "2, 64, 9, 9"), "moderate"
    )
    with pytest.raises(RegionError, match="1 output channels a group"):
        conv_blocked(depthwise)


@pytest.mark.gpu
@pytest.mark.parametrize(
    "task", sorted(str(p.relative_to(CONV_TASKS)) for p in CONV_TASKS.glob("level*/*.py"))
)
def test_the_conv_tasks_are_strictly_correct_on_the_blocked_convolution(task: str, eval_cache: Path) -> None:
    problem = load_problem(CONV_TASKS / task)
    ambition = "aggressive" if task.startswith("level2") else "moderate"
    written = []
    for region, first in offered(problem.source, ambition)[0]:
        body = rule_body(region, first)
        ruled = ruled_launch(region, body)
        if region.kind == "contraction":
            assert ruled is not None and ruled[0] == CONV_BLOCKED, task
        written.append(Written(region, ruled[1] if ruled else first, body))
    strictly_correct_on_gpu(problem, written, eval_cache, trials=5)
