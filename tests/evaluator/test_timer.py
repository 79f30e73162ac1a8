"""The timer's charging rule: a candidate that looks off-stream pays its wall clock, the reference never."""

from __future__ import annotations

from evaluator.harness import Timer


def test_only_a_candidate_is_charged_its_wall_clock() -> None:
    events, walls = [1.0] * 5, [3.0] * 5  # the host came back 2 ms late: side-stream work, or a busy host
    candidate = Timer._summary(events, walls, trials=5, trusted=False)
    reference = Timer._summary(events, walls, trials=5, trusted=True)
    assert candidate["off_stream_suspect"] and candidate["ms"] == 3.0
    assert reference["off_stream_suspect"] and reference["ms"] == 1.0  # reported, not charged


def test_close_clocks_charge_the_events() -> None:
    summary = Timer._summary([1.0, 1.2, 1.1], [1.3, 1.5, 1.4], trials=3, trusted=False)
    assert not summary["off_stream_suspect"] and summary["ms"] == 1.1


def test_a_slow_function_stops_at_the_budget_after_the_minimum_trials() -> None:
    import time

    import torch

    cpu = torch.device("cpu")

    def slow(_: list) -> None:
        time.sleep(0.01)

    budgeted = Timer(cpu, 1024, budget_s=0.05, min_trials=4)
    (timed,) = budgeted.measure_many([slow], lambda i: [], warmup=0, trials=100)
    assert 4 <= timed["trials"] < 20 and timed["ms"] >= 10.0
    (floor,) = Timer(cpu, 1024, budget_s=0.0, min_trials=4).measure_many([slow], lambda i: [], 0, 100)
    assert floor["trials"] == 4  # the budget never cuts below the minimum
    (whole,) = Timer(cpu, 1024).measure_many([lambda _: None], lambda i: [], warmup=0, trials=30)
    assert whole["trials"] == 30  # no budget: every trial
