"""In-worker timing: CUDA events and a wall clock, interleaved trials on fresh inputs, a median known to a
precision, and a sample of the timed outputs compared with the reference's.

Runs only inside a worker process (evaluator.worker); torch is imported at module level on purpose.
"""

from __future__ import annotations

import math
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

import torch

from evaluator.harness import Inputs, sync


class Timer:
    """Median of many trials; CUDA events plus a device-wide wall clock to expose off-stream work.

    Functions timed together are interleaved trial by trial on the same fresh inputs (in alternating
    order), so a load change on the host (builds running beside the GPU run) hits both alike.
    """

    def __init__(
        self,
        device: torch.device,
        flush_bytes: int,
        budget_s: float | None = None,
        min_trials: int = 10,
        precision: float | None = None,
        precision_far: float | None = None,
    ) -> None:
        self.device = device
        self.flush = torch.empty(max(flush_bytes // 4, 1), dtype=torch.float32, device=device)
        # Trials stop early once `min_trials` are done and the trials took `budget_s`: a kernel at 50 ms a
        # call needs no 100 of them for its median, and its 100 would hold the GPU for ten seconds.
        self.budget_s = budget_s
        self.min_trials = min_trials
        # ... and once every function's median is known to within this fraction (95%, distribution-free):
        # a kernel whose times agree to 1% over ten trials learns nothing from ninety more.
        self.precision = precision
        # ... or, for two functions timed together whose medians are far apart, to within a tenth of the log
        # of their ratio (at most `precision_far`): a kernel at 0.12x the reference is that whether its median
        # is known to 1% or to 5%, while near 1x (the 1.05x line) `precision` stands.
        self.precision_far = precision_far

    def measure(
        self,
        fn: Callable[[Inputs], Any],
        make: Callable[[int], Inputs],
        warmup: int,
        trials: int,
        trusted: bool = False,
    ) -> dict[str, Any]:
        return self.measure_many([fn], make, warmup, trials, [trusted])[0]

    def measure_many(
        self,
        fns: list[Callable[[Inputs], Any]],
        make: Callable[[int], Inputs],
        warmup: int,
        trials: int,
        trusted: list[bool] | None = None,
        check: Callable[[Any, Any], dict[str, Any]] | None = None,
    ) -> list[dict[str, Any]]:
        """`trusted` marks the reference's own functions (see `_summary`); candidates never are. With
        `check(out, expected)`, a sample of the timed calls' outputs is compared with the first trusted
        function's (see `_OutputSample`): each candidate's summary gets `output_check`."""
        args = make(0)
        for fn in fns:
            for _ in range(warmup):
                fn(args)
        sync(self.device)
        flags = trusted or [False] * len(fns)
        sample = None
        if check is not None and True in flags:
            sample = _OutputSample(flags, trials, self.min_trials, check)
        samples: list[tuple[list[float], list[float]]] = [([], []) for _ in fns]
        started = time.perf_counter()
        checking = 0.0  # seconds spent comparing: not the functions' time, not counted against the budget
        done = 0
        for i in range(trials):
            args = make(i + 1)  # fresh inputs every trial
            order = _order(i, len(fns))
            keep = sample is not None and sample.begin(order)
            outs: dict[int, Any] = {}
            for k in order:
                if keep:  # a forward that draws random numbers draws the same ones as the reference
                    torch.manual_seed(_SAMPLE_SEED + i)
                event_ms, wall_ms, out = self._trial(fns[k], args, keep)
                if keep:
                    outs[k] = out
                del out
                if event_ms is not None:
                    samples[k][0].append(event_ms)
                samples[k][1].append(wall_ms)
            done = i + 1
            if sample is not None:
                t0 = time.perf_counter()
                sample.end(i, outs)
                del outs
                checking += time.perf_counter() - t0
            if self._spent(done, time.perf_counter() - started - checking, samples):
                break
        summaries = [
            self._summary(events, walls, done, trust)
            for (events, walls), trust in zip(samples, flags, strict=True)
        ]
        if sample is not None:
            sample.finish()
            for k, summary in enumerate(summaries):
                if not flags[k]:
                    summary["output_check"] = sample.report(k)
        return summaries

    def _spent(self, done: int, seconds: float, samples: list[tuple[list[float], list[float]]]) -> bool:
        """Enough trials: past the budget, or every function's median known to the precision it needs."""
        if done < self.min_trials:
            return False
        if self.budget_s is not None and seconds >= self.budget_s:
            return True
        if self.precision is None:
            return False
        medians = [statistics.median(events or walls) for events, walls in samples]
        needed = self.needed_precision(medians)
        return all(
            _median_half_width(events or walls) <= needed * median
            for (events, walls), median in zip(samples, medians, strict=True)
        )

    def needed_precision(self, medians: list[float]) -> float:
        """`precision`, relaxed for a pair of medians far apart (see `precision_far`)."""
        assert self.precision is not None
        if self.precision_far is None or len(medians) != 2 or min(medians) <= 0:
            return self.precision
        gap = abs(math.log(medians[0] / medians[1])) / 10
        return max(self.precision, min(self.precision_far, gap))

    def _trial(
        self, fn: Callable[[Inputs], Any], args: Inputs, keep: bool = False
    ) -> tuple[float | None, float, Any]:
        """One timed call; its output is returned with `keep` (a sampled trial), else dropped at once."""
        self.flush.zero_()  # evict L2 (or the CPU caches) between trials
        sync(self.device)
        t0 = time.perf_counter()
        event_ms = None
        if self.device.type == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            out = fn(args) if keep else _dropped(fn(args))
            end.record()
            torch.cuda.synchronize(self.device)  # all streams, so side-stream work is waited for
            event_ms = start.elapsed_time(end)
        else:
            out = fn(args) if keep else _dropped(fn(args))
        return event_ms, (time.perf_counter() - t0) * 1e3, out

    @staticmethod
    def _summary(events: list[float], walls: list[float], trials: int, trusted: bool) -> dict[str, Any]:
        """A candidate that looks off-stream is charged its wall clock; the reference never is.

        Work launched on another stream finishes after the end event, and only the wall clock sees it.
        The reference is PyTorch's own code: its wall clock exceeds its events only when the host is
        busy (the parallel builds), and charging that to the baseline would flatter the candidate.
        """
        wall_ms = statistics.median(walls)
        event_ms = statistics.median(events) if events else wall_ms
        off_stream = bool(events) and wall_ms > 2 * event_ms and wall_ms - event_ms > 0.05
        median = event_ms if events else wall_ms
        return {
            "ms": wall_ms if off_stream and not trusted else event_ms,
            # half the 95% interval of the median, as a fraction of it: how well `ms` is known
            "precision": round(_median_half_width(events or walls) / median, 4) if median > 0 else None,
            "event_ms": event_ms,
            "wall_ms": wall_ms,
            "trials": trials,
            "off_stream_suspect": off_stream,
        }


_SAMPLE_SEED = 1_000_003  # the generator's seed before each call of a compared trial (plus the trial)


def _order(trial: int, n: int) -> list[int]:
    """Functions timed together run in alternating order, trial by trial."""
    return list(range(n)) if trial % 2 == 0 else list(reversed(range(n)))


def _dropped(_: Any) -> None:
    return None


def _median_half_width(times: list[float]) -> float:
    """Half the width of the median's 95% confidence interval from order statistics (no assumption about
    the distribution of the times: a GPU kernel's are skewed, with rare slow outliers)."""
    ordered = sorted(times)
    n = len(ordered)
    spread = 1.96 * math.sqrt(n) / 2
    lo, hi = max(0, math.floor(n / 2 - spread) - 1), min(n - 1, math.ceil(n / 2 + spread))
    return (ordered[hi] - ordered[lo]) / 2


class _OutputSample:
    """Which timed calls' outputs are compared with the reference's, and what the comparison found.

    A forward may behave while checked and skip the work while timed (it can tell the timer's warm-up: the
    same inputs several times in a row), and timed outputs were never looked at. Compared: two trials
    picked at random (one among the first `min_trials`, which always run, one among the rest) and the last
    one, against the first trusted function (eager). Only trials in which every candidate ran before every
    trusted function count (every other trial, the order alternates): the reference may write into its
    inputs, the candidate must not (the strict trials say so). Outputs are kept only for those trials, the
    previous one's dropped as the next begins."""

    def __init__(
        self, trusted: list[bool], trials: int, min_trials: int, check: Callable[[Any, Any], dict[str, Any]]
    ) -> None:
        self.ref = trusted.index(True)  # the first trusted function is the reference compared with
        self.trusted = [k for k, t in enumerate(trusted) if t]
        self.candidates = [k for k, t in enumerate(trusted) if not t]
        self.check = check
        eligible = [i for i in range(trials) if self._first(_order(i, len(trusted)))]
        rng = random.Random()  # seeded from the OS: the candidate cannot know the picks
        early = [i for i in eligible if i < min_trials]
        late = [i for i in eligible if i >= min_trials]
        self.picked = {rng.choice(part) for part in (early, late) if part}
        self.held: tuple[int, dict[int, Any]] | None = None
        self.results: list[dict[str, Any]] = []

    def _first(self, order: list[int]) -> bool:
        return all(order.index(k) < order.index(t) for k in self.candidates for t in self.trusted)

    def begin(self, order: list[int]) -> bool:
        """Whether this trial's outputs are kept; a kept trial replaces the one held before."""
        if not self._first(order):
            return False
        self.held = None
        return True

    def end(self, trial: int, outs: dict[int, Any]) -> None:
        if not outs:
            return
        if trial in self.picked:
            self._compare(trial, outs)
        else:
            self.held = (trial, outs)  # compared if no later trial is kept: it was the last one

    def finish(self) -> None:
        if self.held is not None:
            self._compare(*self.held)
            self.held = None

    def _compare(self, trial: int, outs: dict[int, Any]) -> None:
        for k in self.candidates:
            res = self.check(outs[k], outs[self.ref])
            self.results.append({"trial": trial, "fn": k, **res})

    def report(self, k: int) -> dict[str, Any]:
        mine = [r for r in self.results if r["fn"] == k]
        bad = next((r for r in mine if not r.get("ok")), None)
        report: dict[str, Any] = {"trials": sorted(r["trial"] for r in mine), "ok": bad is None}
        if bad is not None:
            report["mismatch"] = {key: v for key, v in bad.items() if key != "fn"}
        return report
