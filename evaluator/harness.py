"""In-worker measurement helpers: inputs made on the device, output comparison, timing, profiling.

Runs only inside a worker process (evaluator.worker); torch is imported at module level on purpose.
"""

from __future__ import annotations

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
        self, device: torch.device, flush_bytes: int, budget_s: float | None = None, min_trials: int = 10
    ) -> None:
        self.device = device
        self.flush = torch.empty(max(flush_bytes // 4, 1), dtype=torch.float32, device=device)
        # Trials stop early once `min_trials` are done and the trials took `budget_s`: a kernel at 50 ms a
        # call needs no 100 of them for its median, and its 100 would hold the GPU for ten seconds.
        self.budget_s = budget_s
        self.min_trials = min_trials

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
    ) -> list[dict[str, Any]]:
        """`trusted` marks the reference's own functions (see `_summary`); candidates never are."""
        args = make(0)
        for fn in fns:
            for _ in range(warmup):
                fn(args)
        sync(self.device)
        samples: list[tuple[list[float], list[float]]] = [([], []) for _ in fns]
        started = time.perf_counter()
        done = 0
        for i in range(trials):
            args = make(i + 1)  # fresh inputs every trial
            order = list(range(len(fns))) if i % 2 == 0 else list(reversed(range(len(fns))))
            for k in order:
                event_ms, wall_ms = self._trial(fns[k], args)
                if event_ms is not None:
                    samples[k][0].append(event_ms)
                samples[k][1].append(wall_ms)
            done = i + 1
            if self._spent(done, time.perf_counter() - started):
                break
        flags = trusted or [False] * len(fns)
        return [
            self._summary(events, walls, done, trust)
            for (events, walls), trust in zip(samples, flags, strict=True)
        ]

    def _spent(self, done: int, seconds: float) -> bool:
        return self.budget_s is not None and done >= self.min_trials and seconds >= self.budget_s

    def _trial(self, fn: Callable[[Inputs], Any], args: Inputs) -> tuple[float | None, float]:
        self.flush.zero_()  # evict L2 (or the CPU caches) between trials
        sync(self.device)
        t0 = time.perf_counter()
        event_ms = None
        if self.device.type == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn(args)
            end.record()
            torch.cuda.synchronize(self.device)  # all streams, so side-stream work is waited for
            event_ms = start.elapsed_time(end)
        else:
            fn(args)
        return event_ms, (time.perf_counter() - t0) * 1e3

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
