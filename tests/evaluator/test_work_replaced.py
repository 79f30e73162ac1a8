"""The strict rule that custom kernels do the work: the pieces it is made of, on the CPU with real torch.

(The whole rule, through real C++ builds and worker processes, is in test_pipeline_cpu.py; on CUDA
kernels, in the GPU suite.)"""

from __future__ import annotations

import json
import math
from pathlib import Path

import torch

from evaluator import harness, profiling
from evaluator.buildcache import form_of, poisoned
from evaluator.config import EvalConfig
from evaluator.runtime import StageLimit
from evaluator.sandbox import STAGE_LIMIT_FILE, _StageWatch

CPU = torch.device("cpu")


def _units(fn) -> dict[str, int]:
    fn()  # warm-up, as the worker does
    return dict(profiling.work_units(profiling.profile_forward(fn, CPU), CPU))


def test_work_units_count_computing_ops_not_allocations_or_views() -> None:
    x, w = torch.rand(16, 32), torch.rand(32, 8)
    units = _units(lambda: torch.relu(x @ w).reshape(-1).contiguous())
    assert units and not [u for u in units if "empty" in u or "view" in u or "reshape" in u]
    twice = _units(lambda: (torch.relu(x @ w), torch.relu(x @ w)))
    assert all(twice[name] == 2 * n for name, n in units.items())


def test_a_candidate_that_still_calls_the_library_replaces_nothing() -> None:
    """What the rule compares: some reference unit must run fewer times in the candidate."""
    a, b = torch.rand(24, 24), torch.rand(24, 24)
    reference = _units(lambda: a @ b)
    in_wrapper = _units(lambda: (a @ b) * 1.0)  # the library's product, then a trivial "kernel"
    by_hand = _units(lambda: (a.unsqueeze(2) * b.unsqueeze(0)).sum(1))  # the product computed otherwise

    def replaced(candidate: dict[str, int]) -> list[str]:
        return [name for name, n in reference.items() if candidate.get(name, 0) < n]

    assert replaced(in_wrapper) == [] and replaced(by_hand)


def test_poisoned_stand_ins_keep_the_form_and_poison_the_values() -> None:
    out = (torch.ones(2, 3), [torch.arange(4), 7], None)
    stand_in = poisoned(form_of(out))
    assert isinstance(stand_in, tuple) and isinstance(stand_in[1], list) and stand_in[2] is None
    assert stand_in[0].shape == (2, 3) and torch.isnan(stand_in[0]).all()
    assert stand_in[1][0].dtype == torch.int64 and stand_in[1][0].tolist() == [0, 0, 0, 0]
    assert stand_in[1][1] == 7


def test_same_values_treats_nan_as_equal_and_anything_else_as_a_change() -> None:
    a = torch.tensor([1.0, math.nan, 3.0])
    assert harness.same_values((a, 2), (a.clone(), 2))
    assert not harness.same_values(a, torch.tensor([1.0, math.nan, 3.5]))
    assert not harness.same_values(a, torch.full((3,), math.nan))
    assert not harness.same_values(a, a.double()) and not harness.same_values([a], [a, a])


def test_stage_limits_scale_with_the_reference_and_reach_the_parent(tmp_path: Path) -> None:
    config = EvalConfig(hang_floor_s=10.0, hang_factor=100.0)
    limit = StageLimit(tmp_path, config, seconds_per_call=0.002)
    watch = _StageWatch(tmp_path / STAGE_LIMIT_FILE)
    watch.poll(100.0)
    assert watch.deadline == math.inf  # nothing set yet: only the run limit applies
    assert limit.calls(20, "correctness") == 10.0 + 100.0 * 20 * 0.002
    watch.poll(100.0)
    assert (watch.stage, watch.deadline) == ("correctness", 100.0 + 14.0)
    watch.poll(105.0)  # the same limit read again does not move the deadline
    assert watch.deadline == 114.0
    assert limit.calls(2, "timing", extra_per_call_s=0.048) == 10.0 + 100.0 * 2 * 0.05
    limit.lift("reference_compile")
    watch.poll(200.0)
    assert watch.stage == "reference_compile" and watch.deadline == math.inf
    assert json.loads((tmp_path / STAGE_LIMIT_FILE).read_text())["seq"] == 3


def test_the_share_floor_judges_programs_not_region_candidates() -> None:
    """A region's share of the forward is the framework's choice (the ambition), not the kernel's: region
    candidates are judged on the work rules and the region check instead, programs keep the floor."""
    from evaluator.phase_run import _share_floor_applies

    assert _share_floor_applies({"candidate": "..."})
    assert _share_floor_applies({"candidate": "...", "regions": None})
    assert not _share_floor_applies(
        {"candidate": "...", "regions": [{"id": "r1", "launch": "l", "spec": {}}]}
    )
