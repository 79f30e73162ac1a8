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
    # the transposed conv, and the whole pointwise chain after it (r1: its bias viewed by channel)
    assert set(shares) == {"r0", "r2"}
    assert abs(shares["r0"] - 0.8291) < 1e-9 and abs(shares["r2"] - 0.1709) < 1e-9


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


def test_a_decomposed_batch_norm_answers_to_its_own_calls_not_to_a_residual_add(
    kernelbench_dir: Path,
) -> None:
    """The H200 profile of the basic block: three aten::batch_norm calls (35% of the time) reach the three
    batch norms' steps, one call each, split over that norm's steps; the residual aten::add_ reaches the add
    after the last norm, not a norm's eps add."""
    traced = trace_problem(load_problem(kernelbench_dir / "level3/8_ResNetBasicBlock.py"))
    regions = partition(traced)
    (profile,) = PROFILES.glob("l3_p8_*_NVIDIA_H200.json")
    rows = json.loads(profile.read_text())["rows"]
    shares = profile_shares(regions, rows, traced.origins)
    # every call found its steps but the last row's: the norms' batch counters (add_ on an int64 scalar)
    assert rows[-1]["shapes"] == [] and abs(sum(shares.values()) - sum(r["share"] for r in rows[:-1])) < 1e-9
    norm = rows[1]["share"] / 3
    # the first norm: ten steps in r1 (mean), r2 (variance), r3 and r4 (views), r5 (six, then the relu)
    assert [round(shares[i], 6) for i in ("r1", "r2", "r3", "r4")] == [round(norm / 10, 6)] * 4
    assert abs(shares["r5"] - (norm * 6 / 10 + rows[3]["share"] / 2)) < 1e-9
    (chosen,) = offer(regions, "conservative", shares)
    assert chosen.id == "r16"  # the last norm, the residual add and the relu: the most measured time
