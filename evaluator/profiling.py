"""In-worker profiles: which kernels a forward launched, from where (inside an ATen op or not), for how long,
and the reference's op table for profiling-guided prompts.

Runs only inside a worker process (evaluator.worker); torch is imported at module level on purpose.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from typing import Any

import torch

from evaluator.harness import sync


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
