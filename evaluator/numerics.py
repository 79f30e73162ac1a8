"""Strict numerics: tolerances derived from the reference's own float32 error, and the extreme-range trial.

KernelBench's fixed atol = rtol = 1e-4 judges each element against its own magnitude, so where an output
crosses zero the allowance shrinks to atol and a verdict can hinge on one element that the seed happened to
put there; and an output's absolute errors grow with its magnitude (a 4096-term sum at x100 inputs), so no
fixed atol fits every trial. The strict rule reads the error at the output's own scale instead, against
what float32 itself costs this reference:

    reference_error = max |ref32 - ref64|      (the reference in float32 and, deep-copied, in float64)
    tolerance       = max(numerics_factor x reference_error,
                          numerics_floor_ulps x eps(dtype) x max |ref64|)
    candidate_error = max |candidate - ref32|   within_reference_numerics: candidate_error <= tolerance

per floating output (maxima over its finite elements). KernelBench's five trials share one tolerance, derived
on `numerics_trials` of them (failure: beyond_reference_numerics); the signed trial ([-1, 1)) and the
extreme trial ([-100, 100), extreme_trial) each derive their own on their inputs (signed_inputs_mismatch,
extreme_inputs_mismatch). Non-floating outputs keep KernelBench's check.

Calibrated in benchmarks/numerics_calibration.py. For GEMMs up to K = 8192, any summation order (one FMA
accumulator, split-K, no FMA, pairwise, MKL's blocking) against any other stays within 0.43 of the
tolerance, while TF32 or float16 operands or a float16 result reach >= 3.9x it on the signed trial (they
hide on [0, 1) inputs, where the float32 sum's own error is as large); the tanh GELU on an erf GELU is 24x
over. The floor (64 ulps of the largest output, 7.6e-6 of it) covers elementwise ops whose reference error
is half an ulp but whose legitimate implementations differ by a few (expf vs __expf, erff, FMA). A maximum
over many elements barely moves between seeds, so an approximation is accepted or rejected whatever the
seed. Past ~1e5 terms one sequential accumulator against a split-K reference is itself beyond (1.8x at
K = 131072 on [0, 1)): it is that much less accurate than the reference. Where float64 cannot run, or the
reference is too slow for it, the configured atol/rtol judge (the extreme trial: strict_scale_rtol of the
output's scale), and the evidence says why.

Runs inside a worker (torch at module level, as evaluator.harness).
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from evaluator import harness
from evaluator.config import EvalConfig

Inputs = list[Any]
SIGNED_SEED_OFFSET = 1001  # the signed trial's inputs: gen(seed + this), mapped to [-1, 1)
EXTREME_SEED_OFFSET = 1002  # the extreme trial's inputs: gen(seed + this), mapped to [-scale, scale)
_STRUCTURAL = ("structure", "value", "type", "shape", "dtype")  # harness.compare's reasons without numbers


@dataclass(frozen=True)
class OutputError:
    """One floating output compared with its reference: the largest |got - expected| over the elements
    where the reference is finite (inf where `got` is not finite there) and the largest finite |expected|."""

    error: float
    scale: float


@dataclass(frozen=True)
class OutputTolerance:
    """What float32 costs one floating output of the reference, and the tolerance that follows."""

    reference_error: float
    scale: float
    tolerance: float


@dataclass
class Derived:
    """The tolerances for one kind of trial (one per output; None for a non-floating one), or why none."""

    outputs: list[OutputTolerance | None] | None = None
    skipped: str | None = None
    trials: int = 0
    seconds: float = 0.0
    reused: bool = False  # derived by an earlier run of the same problem (see Tolerances.from_dict)

    def evidence(self) -> dict[str, Any]:
        found: dict[str, Any] = {"skipped": self.skipped}
        if self.outputs is not None:
            found = {"derived_on_trials": self.trials, "float64_seconds": round(self.seconds, 3)}
        return {**found, "reused_from_an_earlier_run": True} if self.reused else found

    def to_dict(self) -> dict[str, Any]:
        outputs = (
            None
            if self.outputs is None
            else [None if t is None else [t.reference_error, t.scale, t.tolerance] for t in self.outputs]
        )
        return {"outputs": outputs, "skipped": self.skipped, "trials": self.trials, "seconds": self.seconds}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Derived:
        outputs = data.get("outputs")
        return cls(
            outputs=None
            if outputs is None
            else [None if t is None else OutputTolerance(*t) for t in outputs],
            skipped=data.get("skipped"),
            trials=int(data.get("trials") or 0),
            seconds=float(data.get("seconds") or 0.0),
            reused=True,
        )


@dataclass
class Tolerances:
    """Every tolerance the strict checks use, derived once after KernelBench's trials passed."""

    standard: Derived = field(default_factory=Derived)
    signed: Derived = field(default_factory=Derived)
    extreme: Derived = field(default_factory=Derived)

    def to_dict(self) -> dict[str, Any]:
        return {kind: getattr(self, kind).to_dict() for kind in ("standard", "signed", "extreme")}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Tolerances:
        """What an earlier run of the same problem derived: the tolerances depend on the reference, its
        seeded inputs and the configuration only, so every candidate of a problem is judged by the same
        ones, and the float64 runs (seconds, for convolutions) are made once per problem and batch."""
        return cls(**{kind: Derived.from_dict(data[kind]) for kind in ("standard", "signed", "extreme")})


# ---------------------------------------------------------------- inputs


def extreme(inputs: Inputs, scale: float) -> Inputs:
    """Map floating inputs from [0, 1) to [-scale, scale) (as harness.signed, widened)."""
    return [
        v.mul(2 * scale).sub_(scale) if isinstance(v, torch.Tensor) and v.is_floating_point() else v
        for v in inputs
    ]


def signed_inputs(gen: Callable[[int], Inputs], config: EvalConfig) -> Inputs:
    return harness.signed(gen(config.seed + SIGNED_SEED_OFFSET))


def extreme_inputs(gen: Callable[[int], Inputs], config: EvalConfig) -> Inputs:
    return extreme(gen(config.seed + EXTREME_SEED_OFFSET), config.extreme_input_scale)


def to_float64(inputs: Inputs) -> Inputs:
    return [v.double() if isinstance(v, torch.Tensor) and v.is_floating_point() else v for v in inputs]


# ---------------------------------------------------------------- measuring


def output_errors(out: Any, ref: Any) -> list[OutputError | None]:
    """Per output: the error of `out` against `ref` (None where the reference's output is not a floating
    tensor, or the two do not line up: KernelBench's check judges those)."""
    outs, refs = harness.flatten(out), harness.flatten(ref)
    if len(outs) != len(refs):
        return [None] * len(refs)
    return [_tensor_error(o, r) if _comparable(o, r) else None for o, r in zip(outs, refs, strict=True)]


def _comparable(o: Any, r: Any) -> bool:
    return (
        isinstance(r, torch.Tensor)
        and r.is_floating_point()
        and isinstance(o, torch.Tensor)
        and tuple(o.shape) == tuple(r.shape)
    )


def _tensor_error(o: torch.Tensor, r: torch.Tensor) -> OutputError:
    """harness.tensor_stats's pass (chunked: the extra memory stays bounded however large the output)."""
    stats = harness.tensor_stats(o, r, 0.0, 0.0)
    return OutputError(math.inf if stats.unbounded else stats.max_abs_err, stats.ref_max_abs)


def finite(out: Any) -> bool:
    """Every floating tensor of `out` is finite."""
    return all(
        bool(torch.isfinite(t).all())
        for t in harness.flatten(out)
        if isinstance(t, torch.Tensor) and t.is_floating_point()
    )


def tolerance_for(reference_error: float, scale: float, dtype: torch.dtype, config: EvalConfig) -> float:
    """A multiple of the reference's own error, never below a few ulps of the output's largest value."""
    floor = config.numerics_floor_ulps * torch.finfo(dtype).eps * scale
    return max(config.numerics_factor * reference_error, floor)


# ---------------------------------------------------------------- deriving


class Deriver:
    """Runs the reference in float64 beside float32 and derives the tolerances, within a time budget.

    The float64 copy is made once (deep copy, then .double()); tensors the forward creates are float64 too
    (default dtype). A reference that cannot run so, or is too slow, gets no tolerance: the reason says why.
    Each kind of trial ("standard", "signed", "extreme") keeps its errors, so a second derivation of a kind
    widens the first (the maxima over both).
    """

    def __init__(
        self,
        config: EvalConfig,
        ref_model: torch.nn.Module,
        call_ref: Callable[[Inputs], Any],
        dev: torch.device,
        seconds_per_call: float,
        on_out_of_memory: Callable[[], None] | None = None,
    ) -> None:
        self.config = config
        self.ref_model = ref_model
        self.call_ref = call_ref
        self.dev = dev
        self.on_out_of_memory = on_out_of_memory
        self.spent = 0.0  # seconds in float64 calls so far; the budget stops later ones, never the first
        self.runs = 0
        self.model64: torch.nn.Module | None = None
        self.unavailable = self._why_not(seconds_per_call)
        self._found: dict[str, tuple[list[list[OutputError | None]], list[torch.dtype | None], float]] = {}

    def _why_not(self, seconds_per_call: float) -> str | None:
        if not self.config.numerics:
            return "disabled (EvalConfig.numerics)"
        if seconds_per_call > self.config.numerics_max_reference_s:
            return (
                f"the reference takes {seconds_per_call:.2f} s a call (numerics_max_reference_s = "
                f"{self.config.numerics_max_reference_s}): no float64 run"
            )
        return None

    def derive(self, kind: str, makers: list[Callable[[], Inputs]]) -> Derived:
        """The tolerances of `kind` from the float32/float64 pair on each maker's inputs (and any before)."""
        for make in makers:
            if self.unavailable is None and self.runs and self.spent >= self.config.numerics_budget_s:
                self.unavailable = (
                    f"float64 runs took {self.spent:.1f} s (numerics_budget_s = "
                    f"{self.config.numerics_budget_s}): no more of them"
                )
            if self.unavailable is not None:
                break
            pair = self._pair(make)
            if isinstance(pair, str):
                return Derived(skipped=pair)
            errors, dtypes, took = pair
            before = self._found.get(kind, ([], dtypes, 0.0))
            self._found[kind] = (before[0] + [errors], dtypes, before[2] + took)
        if kind not in self._found:
            return Derived(skipped=self.unavailable)
        errors_by_trial, dtypes, seconds = self._found[kind]
        return Derived(
            outputs=self._tolerances(errors_by_trial, dtypes), trials=len(errors_by_trial), seconds=seconds
        )

    def _tolerances(
        self, errors_by_trial: list[list[OutputError | None]], dtypes: list[torch.dtype | None]
    ) -> list[OutputTolerance | None]:
        tolerances: list[OutputTolerance | None] = []
        for i, dtype in enumerate(dtypes):
            found = [trial[i] for trial in errors_by_trial if trial[i] is not None]
            if dtype is None or not found:
                tolerances.append(None)
                continue
            ref_err, scale = max(e.error for e in found), max(e.scale for e in found)
            tolerances.append(
                OutputTolerance(ref_err, scale, tolerance_for(ref_err, scale, dtype, self.config))
            )
        return tolerances

    def _pair(
        self, make: Callable[[], Inputs]
    ) -> tuple[list[OutputError | None], list[torch.dtype | None], float] | str:
        """The reference's float32 error per output against its float64 run, the output dtypes and the
        float64 call's seconds; or why there is none."""
        inputs = make()
        out32 = self.call_ref(inputs)
        if not finite(out32):
            return "the reference is not finite on these inputs"
        inputs64 = to_float64(inputs)
        del inputs
        t0 = time.perf_counter()
        try:
            out64 = self._run64(inputs64)
        except Exception as exc:  # noqa: BLE001 - any failure means: no float64 reference here
            self.unavailable = f"the reference cannot run in float64 ({type(exc).__name__}: {str(exc)[:160]})"
            return self.unavailable
        took = time.perf_counter() - t0
        self.spent += took
        self.runs += 1
        del inputs64
        if not _stayed_float64(out32, out64):
            self.unavailable = (
                "the reference's float64 run gave float32 outputs (it casts back): no float64 truth"
            )
            return self.unavailable
        errors = output_errors(out32, out64)
        if any(e is not None and math.isinf(e.error) for e in errors):
            return "the reference overflows in float32 where float64 stays finite"
        dtypes = [
            t.dtype if isinstance(t, torch.Tensor) and t.is_floating_point() else None
            for t in harness.flatten(out32)
        ]
        return errors, dtypes, took

    def _run64(self, inputs64: Inputs) -> Any:
        """One float64 call; out of memory beside other workers, once more with the device alone."""
        try:
            return self._call64(inputs64)
        except torch.OutOfMemoryError:
            if self.on_out_of_memory is None:
                raise
            _release_cached(self.dev)
            self.on_out_of_memory()
            return self._call64(inputs64)

    def _call64(self, inputs64: Inputs) -> Any:
        if self.model64 is None:
            self.model64 = copy.deepcopy(self.ref_model).double()
        previous = torch.get_default_dtype()
        torch.set_default_dtype(torch.float64)  # tensors the forward makes itself are float64 too
        try:
            with torch.no_grad():
                out = self.model64(*inputs64)
            harness.sync(self.dev)
            return out
        finally:
            torch.set_default_dtype(previous)

    def close(self) -> None:
        self.model64 = None
        _release_cached(self.dev)


def _stayed_float64(out32: Any, out64: Any) -> bool:
    """Every float32 output came back float64: a forward that casts to float32 itself would make the float32
    run its own truth and the tolerance its floor."""
    return all(
        not (isinstance(a, torch.Tensor) and a.dtype == torch.float32)
        or (isinstance(b, torch.Tensor) and b.dtype == torch.float64)
        for a, b in zip(harness.flatten(out32), harness.flatten(out64), strict=False)
    )


def _release_cached(dev: torch.device) -> None:
    if dev.type == "cuda":
        torch.cuda.empty_cache()


def derive_tolerances(
    config: EvalConfig, deriver: Deriver, gen: Callable[[int], Inputs], trial_seeds: list[int]
) -> Tolerances:
    """One standard trial first, then the signed and extreme trials' own inputs, then the other standard
    trials of `numerics_trials`: should the float64 budget run out, it takes the least needed."""
    standard = [(lambda s=s: gen(s)) for s in trial_seeds[: max(1, config.numerics_trials)]]
    try:
        found = Tolerances(standard=deriver.derive("standard", standard[:1]))
        if config.signed_trial:
            found.signed = deriver.derive("signed", [lambda: signed_inputs(gen, config)])
        if config.extreme_trial:
            found.extreme = deriver.derive("extreme", [lambda: extreme_inputs(gen, config)])
        if len(standard) > 1 and found.standard.outputs is not None:
            more = deriver.derive("standard", standard[1:])
            found.standard = more if more.outputs is not None else found.standard
        return found
    finally:
        deriver.close()


# ---------------------------------------------------------------- judging


def _ratio(error: float, tolerance: float) -> float:
    if tolerance > 0:
        return error / tolerance
    return 0.0 if error == 0 else math.inf


def judge(errors_by_trial: list[list[OutputError | None]], derived: Derived) -> dict[str, Any]:
    """The candidate's errors (one list per trial) against the derived tolerances: the worst output's
    numbers, and whether every output of every trial is within them (None: no tolerance, see `skipped`)."""
    if derived.outputs is None:
        return {**derived.evidence(), "fallback": "atol_rtol", "within_reference_numerics": None}
    worst: tuple[float, int, int, OutputError, OutputTolerance] | None = None
    for t, errors in enumerate(errors_by_trial):
        for i, (err, tol) in enumerate(zip(errors, derived.outputs, strict=False)):
            if err is None or tol is None:
                continue
            ratio = _ratio(err.error, tol.tolerance)
            if worst is None or ratio > worst[0]:
                worst = (ratio, t, i, err, tol)
    if worst is None:
        return {"skipped": "no floating output to judge", "within_reference_numerics": None}
    ratio, t, i, err, tol = worst
    return {
        "reference_error": tol.reference_error,
        "scale": tol.scale,
        "tolerance": tol.tolerance,
        "candidate_error": err.error,
        "worst_ratio": float(f"{ratio:.4g}") if math.isfinite(ratio) else ratio,
        "within_reference_numerics": ratio <= 1.0,
        "trial": t,
        "output": i,
        **derived.evidence(),
    }


def strict_compare(
    out: Any, ref_out: Any, derived: Derived, config: EvalConfig, fallback: str
) -> dict[str, Any]:
    """One strict trial: KernelBench's check as evidence (`atol_rtol_ok`), the decision (`ok`) by the
    derived tolerance; without one by `fallback`: "atol_rtol" (that check) or "output_scale" (every
    floating output within strict_scale_rtol of its largest finite value)."""
    res = harness.compare(out, ref_out, config.atol, config.rtol)
    if res.get("reason") in _STRUCTURAL:
        return res
    res["atol_rtol_ok"] = res["ok"]
    errors = output_errors(out, ref_out)
    rest_ok = _non_floating_ok(out, ref_out, config)
    if derived.outputs is not None:
        res["numerics"] = judge([errors], derived)
        res["ok"] = bool(res["numerics"]["within_reference_numerics"] is not False and rest_ok)
        return res
    res["numerics"] = {**derived.evidence(), "fallback": fallback}
    if fallback == "output_scale":
        res["ok"] = rest_ok and all(
            e is None or e.error <= config.strict_scale_rtol * e.scale for e in errors
        )
    return res


def _non_floating_ok(out: Any, ref_out: Any, config: EvalConfig) -> bool:
    """Outputs that are not floating tensors (indices, counts, Python values) keep KernelBench's check."""
    pairs = [
        (o, r)
        for o, r in zip(harness.flatten(out), harness.flatten(ref_out), strict=True)
        if not (isinstance(r, torch.Tensor) and r.is_floating_point())
    ]
    if not pairs:
        return True
    return bool(harness.compare([o for o, _ in pairs], [r for _, r in pairs], config.atol, config.rtol)["ok"])


def extreme_trial(
    config: EvalConfig,
    call_ref: Callable[[Inputs], Any],
    call_cand: Callable[[Inputs], Any],
    gen: Callable[[int], Inputs],
    dev: torch.device,
    derived: Derived,
) -> dict[str, Any]:
    """Floating inputs in [-scale, scale): where the reference stays finite the candidate must match it
    (derived tolerance, else at the output's own scale); where it does not, the trial is skipped."""
    scale = config.extreme_input_scale
    ref_out = call_ref(extreme_inputs(gen, config))
    if not finite(ref_out):
        return {
            "skipped": f"reference is not finite on inputs in [-{scale:g}, {scale:g})",
            "input_scale": scale,
        }
    inputs = extreme_inputs(gen, config)
    out = call_cand(inputs)
    harness.sync(dev)
    res = strict_compare(out, ref_out, derived, config, fallback="output_scale")
    res["input_scale"] = scale
    res["mutated_inputs"] = not harness.inputs_equal(inputs, extreme_inputs(gen, config))
    return res
