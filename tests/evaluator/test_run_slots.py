"""Run workers per device: how many start beside the ones checking or measuring on it."""

from __future__ import annotations

from evaluator.api import _run_slots
from evaluator.config import EvalConfig


def test_workers_per_device_sets_the_gpu_slots_and_never_drops_below_one() -> None:
    slots = _run_slots("cuda", 4)
    assert len(slots) % 4 == 0 and slots  # four per visible GPU (one GPU 0 where none is visible here)
    assert len(_run_slots("cuda", 0)) * 4 == len(slots)


def test_the_cpu_backend_starts_one_worker_beside_the_one_that_runs() -> None:
    assert _run_slots("cpu", EvalConfig().workers_per_device) == [0, 0]
    assert _run_slots("cpu", 1) == [0]
    assert _run_slots("cpu", 0) == [0]
