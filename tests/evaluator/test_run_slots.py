"""Run workers per device: how many start beside the one holding the device."""

from __future__ import annotations

from evaluator.api import _run_slots
from evaluator.config import EvalConfig


def test_workers_per_device_sets_the_slots_and_never_drops_below_one() -> None:
    assert _run_slots("cpu", EvalConfig().workers_per_device) == [0, 0]
    assert _run_slots("cpu", 4) == [0, 0, 0, 0]
    assert _run_slots("cpu", 0) == [0]
