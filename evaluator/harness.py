"""In-worker measurement helpers: inputs made on the device and output comparison (timing: evaluator.timing;
profiles: evaluator.profiling).

Runs only inside a worker process (evaluator.worker); torch is imported at module level on purpose.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
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


@dataclass(frozen=True)
class TensorStats:
    """One output against its reference, from one pass over both (evaluator.numerics reads the same pass).

    `max_abs_err`, `max_rel_err`: over the elements whose difference is finite; `ref_max_abs`: the largest
    finite |reference|; `mismatches`, `first`: elements outside atol + rtol x |reference| (NaN anywhere is
    one, as in torch.allclose); `nonfinite`: the candidate is not finite somewhere the reference is;
    `unbounded`: the difference is not finite somewhere the reference is (that, or an overflow)."""

    max_abs_err: float
    max_rel_err: float
    ref_max_abs: float
    mismatches: int
    first: int | None
    nonfinite: bool
    unbounded: bool


def tensor_stats(o: torch.Tensor, r: torch.Tensor, atol: float, rtol: float) -> TensorStats:
    """Chunk by chunk (KernelBench outputs reach 4 GiB), in the wider of the two dtypes and at least float32:
    float32 outputs compare in float32, as KernelBench's allclose does. Per chunk one fused-minded pass with
    no compaction and no host sync; every chunk's numbers come back in one transfer at the end. (Measured on
    the H200: the float64 version with a sync per maximum held 4 GiB outputs' checks ~0.25 s a trial.)"""
    work = torch.promote_types(torch.promote_types(o.dtype, r.dtype), torch.float32)
    of, rf = o.to(r.device).reshape(-1), r.reshape(-1)
    rows = []
    for start in range(0, rf.numel(), _CHUNK):
        oc, rc = of[start : start + _CHUNK].to(work), rf[start : start + _CHUNK].to(work)
        ref_abs = rc.abs()
        finite_ref = torch.isfinite(rc)
        diff = (oc - rc).abs_()
        bad = ~(diff <= ref_abs * rtol + atol)
        finite_diff = torch.isfinite(diff)
        rel = diff / ref_abs.clamp_min(1e-12)
        rows.append(
            torch.stack(
                [
                    torch.where(finite_diff, diff, 0).amax().double(),
                    torch.where(torch.isfinite(rel), rel, 0).amax().double(),
                    torch.where(finite_ref, ref_abs, 0).amax().double(),
                    bad.sum().double(),
                    bad.byte().argmax().double(),
                    (finite_ref & ~torch.isfinite(oc)).any().double(),
                    (finite_ref & ~finite_diff).any().double(),
                ]
            )
        )
    if not rows:
        return TensorStats(0.0, 0.0, 0.0, 0, None, False, False)
    table = torch.stack(rows).cpu().tolist()
    first = next((int(i * _CHUNK + row[4]) for i, row in enumerate(table) if row[3] > 0), None)
    return TensorStats(
        max_abs_err=max(row[0] for row in table),
        max_rel_err=max(row[1] for row in table),
        ref_max_abs=max(row[2] for row in table),
        mismatches=int(sum(row[3] for row in table)),
        first=first,
        nonfinite=any(row[5] for row in table),
        unbounded=any(row[6] for row in table),
    )


def _compare_tensor(o: torch.Tensor, r: torch.Tensor, atol: float, rtol: float) -> dict[str, Any]:
    stats = tensor_stats(o, r, atol, rtol)
    res: dict[str, Any] = {
        "ok": stats.first is None,
        "max_abs_err": stats.max_abs_err,
        "max_rel_err": stats.max_rel_err,
        "ref_max_abs": stats.ref_max_abs,
        "mismatches": stats.mismatches,
        "numel": r.numel(),
    }
    if stats.first is not None:
        res["reason"] = "nan_inf" if stats.nonfinite else "values"
        res["first_mismatch_index"] = list(_unravel(stats.first, tuple(o.shape)))
        of, rf = o.reshape(-1), r.reshape(-1)
        res["first_mismatch"] = {"expected": float(rf[stats.first]), "got": float(of[stats.first])}
    return res


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
