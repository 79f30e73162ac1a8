"""In-worker measurement helpers: inputs made on the device, output comparison, timing, profiling.

Runs only inside a worker process (evaluator.worker); torch is imported at module level on purpose.
"""

from __future__ import annotations

import math
import random
import re
import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import torch

Inputs = list[Any]


def make_inputs(get_inputs: Callable[[], Sequence[Any]], seed: int, device: torch.device) -> Inputs:
    """KernelBench's get_inputs(), seeded, with every tensor created directly on `device`.

    KernelBench builds inputs on the CPU and copies them over, which dominates at its sizes; a device
    context makes the factories allocate there. Same seed, same device: identical inputs every call.
    """
    torch.manual_seed(seed)
    with torch.device(device):
        values = list(get_inputs())
    return [v.to(device) if isinstance(v, torch.Tensor) else v for v in values]


def signed(inputs: Inputs) -> Inputs:
    """Map floating inputs from [0, 1) to [-1, 1): relu-like shortcuts stop being the identity."""
    return [v.mul(2).sub_(1) if isinstance(v, torch.Tensor) and v.is_floating_point() else v for v in inputs]


def refill_(targets: Inputs, source: Inputs) -> None:
    """Copy fresh values into the existing buffers: same data pointers, new contents."""
    for t, s in zip(targets, source, strict=True):
        if isinstance(t, torch.Tensor):
            t.copy_(s)


def flatten(out: Any) -> list[Any]:
    if isinstance(out, list | tuple):
        items: list[Any] = []
        for o in out:
            items.extend(flatten(o))
        return items
    return [out]


def compare(out: Any, ref: Any, atol: float, rtol: float) -> dict[str, Any]:
    """KernelBench's check (allclose on every output) with the evidence to act on when it fails."""
    outs, refs = flatten(out), flatten(ref)
    if len(outs) != len(refs):
        return {"ok": False, "reason": "structure", "expected_outputs": len(refs), "got_outputs": len(outs)}
    worst: dict[str, Any] = {"ok": True, "max_abs_err": 0.0, "max_rel_err": 0.0, "ref_max_abs": 0.0}
    for i, (o, r) in enumerate(zip(outs, refs, strict=True)):
        if not isinstance(r, torch.Tensor):
            same = o == r if not isinstance(o, torch.Tensor) else False
            if not same:
                return {
                    "ok": False,
                    "reason": "value",
                    "output": i,
                    "expected": repr(r)[:80],
                    "got": repr(o)[:80],
                }
            continue
        if not isinstance(o, torch.Tensor):
            return {"ok": False, "reason": "type", "output": i, "got": type(o).__name__}
        if tuple(o.shape) != tuple(r.shape):
            return {
                "ok": False,
                "reason": "shape",
                "output": i,
                "expected": list(r.shape),
                "got": list(o.shape),
            }
        if o.dtype != r.dtype:
            return {
                "ok": False,
                "reason": "dtype",
                "output": i,
                "expected": str(r.dtype),
                "got": str(o.dtype),
            }
        res = _compare_tensor(o.to(r.device), r, atol, rtol)
        res["output"] = i
        if not res["ok"]:
            return res
        for k in ("max_abs_err", "max_rel_err", "ref_max_abs"):
            worst[k] = max(worst[k], res[k])
    return worst


_CHUNK = 1 << 24  # elements per comparison step: bounds the extra memory for multi-GiB outputs


def _compare_tensor(o: torch.Tensor, r: torch.Tensor, atol: float, rtol: float) -> dict[str, Any]:
    """Compare in float64, chunk by chunk (KernelBench outputs reach 4 GiB; a whole-tensor float64 copy
    of each would not fit beside them)."""
    of, rf = o.reshape(-1), r.reshape(-1)
    res: dict[str, Any] = {
        "ok": True,
        "max_abs_err": 0.0,
        "max_rel_err": 0.0,
        "ref_max_abs": 0.0,
        "mismatches": 0,
        "numel": of.numel(),
    }
    first: int | None = None
    nonfinite = False
    for start in range(0, of.numel(), _CHUNK):
        oc = of[start : start + _CHUNK].double()
        rc = rf[start : start + _CHUNK].double()
        finite_ref = torch.isfinite(rc)
        diff = (oc - rc).abs()
        bad = ~(diff <= atol + rtol * rc.abs())  # NaN anywhere is a mismatch, as in torch.allclose
        res["max_abs_err"] = max(res["max_abs_err"], _finite_max(diff))
        res["max_rel_err"] = max(res["max_rel_err"], _finite_max(diff / rc.abs().clamp_min(1e-12)))
        if bool(finite_ref.any()):
            res["ref_max_abs"] = max(res["ref_max_abs"], float(rc.abs()[finite_ref].max()))
        count = int(bad.sum())
        if count:
            res["mismatches"] += count
            nonfinite = nonfinite or bool((~torch.isfinite(oc) & finite_ref).any())
            if first is None:
                first = start + int(bad.nonzero()[0])
    if first is not None:
        res["ok"] = False
        res["reason"] = "nan_inf" if nonfinite else "values"
        res["first_mismatch_index"] = list(_unravel(first, tuple(o.shape)))
        res["first_mismatch"] = {"expected": float(rf[first]), "got": float(of[first])}
    return res


def _finite_max(t: torch.Tensor) -> float:
    t = t[torch.isfinite(t)]
    return float(t.max()) if t.numel() else 0.0


def _unravel(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    idx = []
    for dim in reversed(shape):
        idx.append(flat % dim)
        flat //= dim
    return tuple(reversed(idx))


def inputs_equal(a: Inputs, b: Inputs) -> bool:
    """Exact equality (NaN-aware): used to detect a candidate that writes into its inputs."""
    for x, y in zip(a, b, strict=True):
        if isinstance(x, torch.Tensor):
            if not torch.equal(x, y) and not bool(((x == y) | (x.isnan() & y.isnan())).all()):
                return False
    return True


def aliases(out: Any, inputs: Inputs) -> bool:
    """True when an output shares memory with an input tensor."""
    spans = []
    for t in inputs:
        if isinstance(t, torch.Tensor) and t.numel():
            base = t.untyped_storage().data_ptr()
            spans.append((base, base + t.untyped_storage().nbytes()))
    for o in flatten(out):
        if isinstance(o, torch.Tensor) and o.numel():
            lo = o.untyped_storage().data_ptr()
            hi = lo + o.untyped_storage().nbytes()
            if any(lo < b_hi and b_lo < hi for b_lo, b_hi in spans):
                return True
    return False


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


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
        `check(out, expected)` and one trusted function, a sample of the timed calls' outputs is compared
        (see `_OutputSample`): each candidate's summary gets `output_check`."""
        args = make(0)
        for fn in fns:
            for _ in range(warmup):
                fn(args)
        sync(self.device)
        flags = trusted or [False] * len(fns)
        sample = None
        if check is not None and flags.count(True) == 1:
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
        """Enough trials: past the budget, or every function's median already known to `precision`."""
        if done < self.min_trials:
            return False
        if self.budget_s is not None and seconds >= self.budget_s:
            return True
        return self.precision is not None and all(
            _median_half_width(events or walls) <= self.precision * statistics.median(events or walls)
            for events, walls in samples
        )

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
        return {
            "ms": wall_ms if off_stream and not trusted else event_ms,
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
    one. Only trials in which every candidate ran before the reference count (every other trial, the order
    alternates): the reference may write into its inputs, the candidate must not (the strict trials say
    so). Outputs are kept only for those trials, the previous one's dropped as the next begins."""

    def __init__(
        self, trusted: list[bool], trials: int, min_trials: int, check: Callable[[Any, Any], dict[str, Any]]
    ) -> None:
        self.ref = trusted.index(True)
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
        return all(order.index(k) < order.index(self.ref) for k in self.candidates)

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


def warm_up(device: torch.device, profiler: bool) -> None:
    """Create the CUDA context and start and stop the profiler once, before the device lock is taken.

    Measured on the H200 (region kind, 26 correct candidates): the strict stage's two profiled calls held
    the device 4.1 s of a correct candidate's 6.7 s, for kernels that run in microseconds to milliseconds:
    the tracer's start-up in a fresh process, not the work. One tiny kernel is all this runs on the GPU."""
    if device.type != "cuda":
        return
    probe = torch.ones(1, device=device)
    if profiler:
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
            probe.add_(1)
            sync(device)
    sync(device)


def profile_forward(fn: Callable[[], Any], device: torch.device) -> Any:
    """One profiled call (after the caller's warm-up)."""
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    with profile(activities=activities, record_shapes=True) as prof:
        fn()
        sync(device)
    return prof


def device_kernels(prof: Any) -> list[tuple[str, float]]:
    """(kernel name, device microseconds) for every GPU kernel the profile saw."""
    from torch.autograd import DeviceType

    out = []
    for evt in prof.events():
        if getattr(evt, "device_type", None) == DeviceType.CUDA:
            out.append((evt.name, float(evt.time_range.elapsed_us())))
    if not out:
        for evt in prof.events():
            for k in getattr(evt, "kernels", []) or []:
                out.append((k.name, float(getattr(k, "duration", 0.0))))
    return out


def kernel_launches(prof: Any) -> list[tuple[str, float, bool]]:
    """(kernel name, device microseconds, library) for every GPU kernel of a profile; `library` when torch
    attributed the kernel to an aten:: op or to anything below one, whatever the kernel is called.

    How torch attributes a kernel (torch.autograd.profiler.profile._parse_kineto_results): every op the
    dispatcher runs, called from Python or from C++ (`at::div` in an extension's wrapper too), is a
    RecordFunction that pushes its correlation id while it runs; CUPTI stamps each kernel launched then with
    the id on top (the kernel event's `linked_correlation_id`), and the parser appends the kernel, as
    Kernel(name, device, duration), to the `kernels` of the CPU FunctionEvent with that id. The CPU events
    form a tree by time (`cpu_children`), and EventList._remove_dup_nodes lifts a sole same-named child's
    kernels into its parent. A kernel launched by the candidate's own code (its wrapper, between ATen
    calls; the NVRTC launcher) is under no aten:: op: only those can be custom work. Kernel names come from
    the candidate's source, so a `__global__` named like ATen's kernel would otherwise take their time.

    A device kernel is matched to its op by that link, else by name and duration among the `kernels`
    lists (the same float in both places); a profile with no device events gives the lists alone."""
    from torch.autograd import DeviceType

    events = list(prof.events())
    listed: list[tuple[str, float, bool]] = []
    library: Counter[tuple[str, float]] = Counter()
    library_ids: set[int] = set()
    stack = [(e, False) for e in events if e.device_type != DeviceType.CUDA and e.cpu_parent is None]
    while stack:
        evt, under = stack.pop()
        under = under or evt.name.startswith("aten::")
        if under and evt.id and not getattr(evt, "linked_correlation_id", 0):  # an op, not a runtime call
            library_ids.add(evt.id)
        for k in getattr(evt, "kernels", None) or []:
            listed.append((k.name, float(k.duration), under))
            if under:
                library[(k.name, round(float(k.duration), 3))] += 1
        stack.extend((child, under) for child in evt.cpu_children)
    device = [e for e in events if e.device_type == DeviceType.CUDA]
    if not device:
        return listed
    out = []
    for e in device:
        us = float(e.time_range.elapsed_us())
        key = (e.name, round(us, 3))
        linked = getattr(e, "linked_correlation_id", 0)
        lib = bool(linked) and linked in library_ids
        if library[key] > 0:
            library[key] -= 1
            lib = True
        out.append((e.name, us, lib))
    return out


def matches_kernel(kernel: str, name: str) -> bool:
    """A profiler kernel name (demangled, with namespace and template arguments) is the `__global__` name."""
    return re.search(rf"\b{re.escape(name)}\b", kernel) is not None


def custom_kernel_time(launches: list[tuple[str, float, bool]], names: set[str]) -> dict[str, Any]:
    """Device time of the candidate's own kernels (named in its source, launched outside any ATen op), of
    all kernels, and how many library kernels carried one of those names."""
    own = [us for name, us, lib in launches if not lib and any(matches_kernel(name, n) for n in names)]
    named_library = [name for name, _, lib in launches if lib and any(matches_kernel(name, n) for n in names)]
    return {
        "custom_us": sum(own),
        "total_us": sum(us for _, us, _ in launches),
        "library_named_like_custom": len(named_library),
    }


# ATen ops that allocate, reshape or alias without computing: not work that a kernel could replace.
_NOT_WORK = re.compile(
    r"aten::(empty\w*|view\w*|_unsafe_view|reshape|_reshape_alias|as_strided|alias|detach_?|lift_fresh|"
    r"resolve_conj|resolve_neg|t|transpose|permute|expand|unsqueeze|squeeze|select|slice|contiguous|"
    r"size|stride|numel|item|_local_scalar_dense|set_|resize_)"
)


def work_units(prof: Any, device: torch.device) -> Counter[str]:
    """How often a forward launched each unit of work: GPU kernels by name on CUDA (copies and memsets
    aside); on the CPU, the innermost ATen ops that compute (`matmul` is counted as the `mm` it calls,
    whatever path reaches it). Two forwards' counts say which work one of them no longer does."""
    if device.type == "cuda":
        return Counter(name for name, _ in device_kernels(prof) if not name.startswith(("Memcpy", "Memset")))
    return Counter(e.name for e in prof.events() if _computes(e) and not any(map(_computes, e.cpu_children)))


def _computes(evt: Any) -> bool:
    return evt.name.startswith("aten::") and not _NOT_WORK.fullmatch(evt.name)


def same_values(a: Any, b: Any) -> bool:
    """Bit-for-bit the same outputs (NaN equal to NaN): a forward that ignored a change gives these."""
    xs, ys = flatten(a), flatten(b)
    if len(xs) != len(ys):
        return False
    for x, y in zip(xs, ys, strict=True):
        if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor):
            if x.shape != y.shape or x.dtype != y.dtype:
                return False
            if x.is_floating_point() or x.is_complex():
                if not torch.equal(torch.isnan(x), torch.isnan(y)):
                    return False
                if not torch.equal(torch.nan_to_num(x, nan=0.0), torch.nan_to_num(y, nan=0.0)):
                    return False
            elif not torch.equal(x, y):
                return False
        elif isinstance(x, torch.Tensor) or isinstance(y, torch.Tensor) or x != y:
            return False
    return True


def _device_time(evt: Any, self_only: bool) -> float:
    names = (
        ["self_device_time_total", "self_cuda_time_total"]
        if self_only
        else ["device_time_total", "cuda_time_total"]
    )
    for name in names:
        value = getattr(evt, name, None)
        if value is not None:
            return float(value)
    return 0.0


def op_table(prof: Any, device: torch.device) -> list[dict[str, Any]]:
    """Top-level operators of one forward: time (device or CPU), share, shapes and kernel names."""
    top = [
        e
        for e in prof.events()
        if e.cpu_parent is None
        and e.name.startswith("aten::")
        and getattr(e, "device_type", None) != _cuda_type()
    ]
    rows = []
    for e in top:
        kernels = _descendant_kernels(e)
        t = _device_time(e, self_only=False) if device.type == "cuda" else float(e.cpu_time_total)
        rows.append(
            {
                "op": e.name,
                "us": t,
                "shapes": [list(s) for s in (e.input_shapes or []) if s],
                "kernels": sorted(set(kernels))[:4],
            }
        )
    total = sum(r["us"] for r in rows) or 1.0
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for r in rows:
        key = (r["op"], str(r["shapes"]))
        m = merged.setdefault(key, {**r, "us": 0.0, "calls": 0})
        m["us"] += r["us"]
        m["calls"] += 1
    table = sorted(merged.values(), key=lambda r: -r["us"])
    for r in table:
        r["share"] = round(r["us"] / total, 4)
        r["us"] = round(r["us"], 2)
    return table


def _cuda_type() -> Any:
    from torch.autograd import DeviceType

    return DeviceType.CUDA


def _descendant_kernels(evt: Any) -> list[str]:
    names = [k.name for k in (getattr(evt, "kernels", []) or [])]
    for child in evt.cpu_children:
        names.extend(_descendant_kernels(child))
    return names


def render_table(rows: list[dict[str, Any]], unit: str = "us", limit: int = 15) -> str:
    """The op table as fixed-width text for a prompt."""
    lines = [f"{'share':>6}  {'time(' + unit + ')':>10}  {'calls':>5}  op / shapes / kernels"]
    for r in rows[:limit]:
        kern = f"  [{'; '.join(k[:60] for k in r['kernels'])}]" if r["kernels"] else ""
        lines.append(
            f"{r['share'] * 100:5.1f}%  {r['us']:10.1f}  {r['calls']:5d}  {r['op']} {r['shapes']}{kern}"
        )
    return "\n".join(lines)
