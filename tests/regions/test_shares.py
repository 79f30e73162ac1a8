"""Regions' shares of a measured profile: rows meet steps by op name, each call once, in graph order."""

from __future__ import annotations

import json
from pathlib import Path

from evaluator.problem import load_problem
from regions.partition import offer, partition
from regions.shares import profile_shares
from regions.trace import trace_problem

PROFILES = Path(__file__).resolve().parents[2] / "benchmarks" / "profiles"


def _regions(kernelbench_dir: Path, case: str) -> list:
    return partition(trace_problem(load_problem(kernelbench_dir / case)))


def test_the_h200_profile_splits_between_the_conv_and_its_epilogue(kernelbench_dir: Path) -> None:
    regions = _regions(kernelbench_dir, "level2/2_ConvTranspose2d_BiasAdd_Clamp_Scaling_Clamp_Divide.py")
    (profile,) = PROFILES.glob("l2_p2_*_NVIDIA_H200.json")
    shares = profile_shares(regions, json.loads(profile.read_text())["rows"])
    assert set(shares) == {"r0", "r1"}  # the transposed conv, and the whole pointwise chain after it
    assert abs(shares["r0"] - 0.8291) < 1e-9 and abs(shares["r1"] - 0.1709) < 1e-9


def test_each_call_goes_to_one_step_and_what_no_step_runs_stays_unclaimed(kernelbench_dir: Path) -> None:
    regions = _regions(kernelbench_dir, "level3/8_ResNetBasicBlock.py")
    rows = [
        {"op": "aten::relu_", "share": 0.2, "calls": 2},  # one call each: r5's relu, then r16's
        # the first three adds in graph order: r5's two (its batch norm's eps and bias), then r16's first
        {"op": "aten::add_", "share": 0.3, "calls": 3},
        {"op": "aten::max_pool2d", "share": 0.5, "calls": 1},  # no step of this model runs it
    ]
    shares = profile_shares(regions, rows)
    assert {k: round(v, 9) for k, v in shares.items()} == {"r5": 0.3, "r16": 0.2}


def test_a_measured_share_chooses_the_conservative_region(kernelbench_dir: Path) -> None:
    regions = _regions(kernelbench_dir, "level3/8_ResNetBasicBlock.py")
    (by_estimate,) = offer(regions, "conservative")
    assert by_estimate.id == "r16"  # two batch norms, the residual add and relu: the largest estimate
    (by_profile,) = offer(regions, "conservative", {"r5": 0.4, "r16": 0.1})
    assert by_profile.id == "r5"
