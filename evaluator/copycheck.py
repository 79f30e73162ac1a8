"""A custom kernel that only copies or casts what it was given is not work.

The hole: the answer is computed by some PyTorch op other than the reference's (so a reference kernel
does run fewer times), then handed through an extension call whose kernel copies it; the skip trial sees
the output depend on that call, the share sees its kernel run. What no real kernel does is give back,
as every one of its results, the very values of one of its arguments.

So in one dedicated strict call the build cache's extension wrapper (buildcache.ExtensionProxy) snapshots
each call's tensor arguments, and after the call classifies it: `copy` when every result (each returned
tensor, and each argument the call wrote into) equals one argument's values as they were before the call,
after casting to the result's dtype, NaN equal to NaN; `work` otherwise; `none` when it had no result.
A forward whose calls are all copies (at least one) fails with `custom_kernels_only_copy`.

The call runs on signed inputs (a ReLU is not the identity there) and again on inputs four times as wide,
since a kernel that clamps to [-1, 1] is the identity on signed inputs; a variant on which the reference
itself gives back an input unchanged says nothing and is skipped. Region kernels (NVRTC) are wrapped by
the same proxy, so they are judged alike.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import torch

_CHUNK = 1 << 24  # elements per comparison step (outputs reach 4 GiB)
MAX_SNAPSHOT_BYTES = 16 << 30  # arguments larger than this in one call are not snapshotted: `unknown`
WIDE = 4.0  # the second variant's inputs: signed ones times this
# Out of memory beside other workers is not the candidate's doing: it reaches the worker, and the run is
# judged again with the device alone (evaluator.api), rather than counting as no evidence.
OUT_OF_MEMORY = torch.cuda.OutOfMemoryError


def _tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, list | tuple):
        return [t for v in value for t in _tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors(v)]
    return []


def _others(value: Any) -> list[Any]:
    """Non-tensor results (a number a kernel computed is work this check cannot judge)."""
    if isinstance(value, torch.Tensor) or value is None:
        return []
    if isinstance(value, list | tuple):
        return [o for v in value for o in _others(v)]
    return [value]


def same_values(src: torch.Tensor, dst: torch.Tensor) -> bool:
    """`dst` holds exactly `src`'s values, in order, after casting `src` to `dst`'s dtype (NaN equal to NaN);
    compared chunk by chunk, stopping at the first difference."""
    if src.numel() != dst.numel() or dst.numel() == 0:
        return False
    a, b = src.reshape(-1), dst.reshape(-1)
    for start in range(0, b.numel(), _CHUNK):
        x = a[start : start + _CHUNK].to(device=b.device, dtype=b.dtype)
        y = b[start : start + _CHUNK]
        eq = x == y
        if x.is_floating_point() or x.is_complex():
            eq |= torch.isnan(x) & torch.isnan(y)
        if not bool(eq.all()):
            return False
    return True


class CallProbe:
    """One extension call under the copy check: its tensor arguments before the call, then its verdict."""

    def __init__(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self.args = _tensors(list(args)) + _tensors(kwargs)
        nbytes = sum(t.numel() * t.element_size() for t in self.args)
        self.before = [t.detach().clone() for t in self.args] if nbytes <= MAX_SNAPSHOT_BYTES else None

    def classify(self, out: Any) -> str:
        if self.before is None:
            return "unknown"
        _sync(self.args + _tensors(out))
        if _others(out):
            return "work"
        written = [t for t, b in zip(self.args, self.before, strict=True) if not same_values(b, t)]
        results = [t for t in _tensors(out) + written if t.numel() > 0]
        if not results:
            return "none"
        copies = all(any(same_values(b, r) for b in self.before) for r in results)
        return "copy" if copies else "work"


def _sync(tensors: list[torch.Tensor]) -> None:
    """The call's kernels may run on another stream: wait for the device before reading what they wrote."""
    if any(t.is_cuda for t in tensors):
        torch.cuda.synchronize()


def reference_copies(ref_out: Any, inputs: list[Any]) -> bool:
    """The reference itself gives back an input's values: a copying kernel is then the problem's answer."""
    given = [t for t in inputs if isinstance(t, torch.Tensor)]
    return any(any(same_values(g, o) for g in given) for o in _tensors(ref_out))


def _widened(inputs: list[Any]) -> list[Any]:
    return [v * WIDE if isinstance(v, torch.Tensor) and v.is_floating_point() else v for v in inputs]


def copy_trial(
    recorder: Any,
    call_ref: Callable[[list[Any]], Any],
    call_cand: Callable[[list[Any]], Any],
    signed_inputs: Callable[[], list[Any]],
) -> dict[str, Any]:
    """Run forward on signed and on wide inputs with every extension call classified; `only_copies` when
    no variant showed work and at least one showed nothing but copies. A variant whose forward raises, or
    on which the reference copies an input, is skipped (it can only hide a copy on the other one)."""
    variants: dict[str, dict[str, Any]] = {}
    for name, make in (("signed", signed_inputs), ("wide", lambda: _widened(signed_inputs()))):
        variants[name] = _variant(recorder, call_ref, call_cand, make)
    verdicts = [v.get("verdict") for v in variants.values()]
    return {"only_copies": "copy" in verdicts and "work" not in verdicts, "variants": variants}


def _variant(
    recorder: Any,
    call_ref: Callable[[list[Any]], Any],
    call_cand: Callable[[list[Any]], Any],
    make: Callable[[], list[Any]],
) -> dict[str, Any]:
    try:
        inputs = make()
        if reference_copies(call_ref(inputs), inputs):
            return {"skipped": "the reference returns an input unchanged"}
        del inputs
        recorder.copy_calls = []
        try:
            call_cand(make())
        finally:
            calls, recorder.copy_calls = recorder.copy_calls, None
    except OUT_OF_MEMORY:
        raise
    except Exception as exc:  # noqa: BLE001 - no evidence either way; the strict trials judge the errors
        return {"skipped": f"{type(exc).__name__}: {str(exc)[:160]}"}
    kinds = Counter(calls)
    if kinds["work"] or kinds["unknown"]:
        verdict = "work"
    elif kinds["copy"]:
        verdict = "copy"
    else:
        verdict = "no_calls"
    return {"verdict": verdict, "calls": dict(kinds)}
