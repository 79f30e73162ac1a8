"""The timer's charging rule: a candidate that looks off-stream pays its wall clock, the reference never."""

from __future__ import annotations

import pytest

from evaluator.timing import Timer


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


def test_trials_stop_once_every_median_is_known_to_the_precision() -> None:
    import torch

    timer = Timer(torch.device("cpu"), 1024, budget_s=None, min_trials=10, precision=0.01)
    steady = ([1.000, 1.004, 0.998, 1.002, 1.001, 0.999, 1.003, 1.000, 0.997, 1.001], [])
    noisy = ([1.0, 1.3, 0.9, 1.1, 1.0, 1.2, 0.95, 1.05, 1.0, 1.25], [])
    assert timer._spent(10, 0.0, [steady])
    assert not timer._spent(9, 0.0, [(steady[0][:9], [])])  # the minimum number of trials first
    assert not timer._spent(10, 0.0, [steady, noisy])  # every function's median, not one of them
    walls_only = ([], steady[0])  # on the CPU there are no events: the wall clock decides
    assert timer._spent(10, 0.0, [walls_only])
    assert not Timer(torch.device("cpu"), 1024, budget_s=None, min_trials=10)._spent(10, 0.0, [steady])


def test_the_median_interval_widens_with_an_outlier_only_when_it_is_inside_the_ranks() -> None:
    from evaluator.timing import _median_half_width

    twenty = [1.0] * 19 + [50.0]  # one slow trial in twenty lies outside the interval's ranks
    assert _median_half_width(twenty) == 0.0
    assert _median_half_width([1.0] * 10 + [2.0] * 10) == 0.5


def test_medians_far_apart_need_only_a_tenth_of_their_log_ratio() -> None:
    import math

    import torch

    timer = Timer(torch.device("cpu"), 1024, budget_s=None, min_trials=10, precision=0.01, precision_far=0.05)
    # a reference at 1 ms and a candidate at 8 ms, each known to ~4%: enough to say 0.125x
    ref = ([1.0, 1.04, 0.97, 1.02, 1.0, 0.96, 1.03, 1.0, 0.98, 1.05], [])
    slow = ([8 * t for t in ref[0]], [])
    assert timer.needed_precision([1.0, 8.0]) == 0.05
    assert timer._spent(10, 0.0, [ref, slow])
    # near 1x the 1% stands: the same spreads decide nothing
    close = ([1.05 * t for t in ref[0]], [])
    assert timer.needed_precision([1.0, 1.05]) == 0.01
    assert not timer._spent(10, 0.0, [ref, close])
    assert timer.needed_precision([1.0, 1.5]) == pytest.approx(math.log(1.5) / 10)
    # alone, or with the relief off, every median needs `precision`
    assert not timer._spent(10, 0.0, [ref])
    strict = Timer(torch.device("cpu"), 1024, budget_s=None, min_trials=10, precision=0.01)
    assert not strict._spent(10, 0.0, [ref, slow])


def test_a_summary_says_how_well_its_median_is_known() -> None:
    times = [1.0, 1.02, 0.98, 1.0, 1.01, 0.99, 1.0, 1.0, 1.03, 0.97]
    summary = Timer._summary(times, times, 10, False)
    assert summary["precision"] == 0.03  # (1.03 - 0.97) / 2 over a median of 1.0


def test_beside_two_references_the_candidate_s_outputs_are_sampled_where_it_ran_first() -> None:
    """Candidate, eager and a second trusted function (torch.compile's) in one set of trials: the
    candidate's timed outputs are compared with eager's, only in trials where it ran before both, and a
    candidate that skips the work while timed is caught."""
    import torch

    cpu = torch.device("cpu")

    def fn(value: float):
        return lambda args: args[0] * 0 + value

    def check(out: torch.Tensor, ref: torch.Tensor) -> dict:
        return {"ok": bool(torch.equal(out, ref))}

    timer = Timer(cpu, flush_bytes=1024)
    make = lambda i: [torch.ones(4) * i]  # noqa: E731
    right = timer.measure_many(
        [fn(1.0), fn(1.0), fn(1.0)], make, 1, 12, [False, True, True], check
    )
    lazy = timer.measure_many(
        [fn(0.0), fn(1.0), fn(1.0)], make, 1, 12, [False, True, True], check
    )
    assert right[0]["output_check"]["ok"] and not lazy[0]["output_check"]["ok"]
    assert all(t % 2 == 0 for t in right[0]["output_check"]["trials"])  # [cand, eager, compiled] trials
    assert "output_check" not in right[1] and "output_check" not in right[2]
    assert right[0]["trials"] == right[1]["trials"] == right[2]["trials"] == 12
