"""The verdict: the one shape of what the evaluator says about a candidate, its names, and the ranking.

Verdicts travel as JSON (result lines from a GPU host, graph state, checkpoints, results files), so the
shape is a TypedDict over a plain dict. Everything that judges, copies, summarises or ranks a verdict goes
through this module: the evaluator builds them with `make`, the graph ranks candidates with `rank`, and
results files and reports keep the `summary` of each candidate. A region candidate's verdict also carries
each region kernel's own check (`RegionCheck`, built with `region_check`) under `evidence["regions"]`.
Standard library only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal, Required, TypedDict, TypeVar, cast

Name = Literal[
    "no_code", "static_reject", "compile_error", "runtime_error", "timeout", "wrong_output", "correct"
]

# In pipeline order, with how far a candidate got: a failure later in the pipeline is closer to working.
STAGE: dict[str, int] = {
    "no_code": 0,
    "static_reject": 1,
    "compile_error": 2,
    "timeout": 3,
    "runtime_error": 3,
    "wrong_output": 4,
    "correct": 5,
}
VERDICTS: tuple[str, ...] = tuple(STAGE)
_NOT_BUILT = ("no_code", "static_reject", "compile_error")


class Verdict(TypedDict):
    """What the evaluator says about one candidate. `verdict` is the strict one, the one counted."""

    verdict: Name
    verdict_kernelbench: Name  # what KernelBench's own rules would say
    counted: Literal["strict"]
    correct_kernelbench: bool
    correct_strict: bool
    compiled: bool
    speedup_eager: float | None  # reference eager time / candidate time; set when it ran correctly
    speedup_compile: float | None  # the same against torch.compile
    custom_kernel_share: float | None  # the candidate's own kernels' share of its GPU time
    static_findings: list[dict[str, Any]]
    evidence: dict[str, Any]
    log_tail: str


# What a results file keeps of each candidate's verdict (the evidence and logs stay in the trace).
SUMMARY_FIELDS: tuple[str, ...] = (
    "verdict",
    "correct_strict",
    "correct_kernelbench",
    "compiled",
    "speedup_eager",
    "speedup_compile",
    "custom_kernel_share",
)


def make(
    verdict: str,
    *,
    kernelbench: str | None = None,
    evidence: dict[str, Any] | None = None,
    log_tail: str = "",
    static_findings: list[dict[str, Any]] | None = None,
    speedup_eager: float | None = None,
    speedup_compile: float | None = None,
    custom_kernel_share: float | None = None,
) -> Verdict:
    """A verdict; `compiled` follows from how far it got (a build that timed out did not compile)."""
    if verdict not in STAGE or (kernelbench is not None and kernelbench not in STAGE):
        raise ValueError(f"unknown verdict {verdict!r} / {kernelbench!r}; known: {', '.join(VERDICTS)}")
    kb = kernelbench or verdict
    evidence = evidence or {}
    compiled = verdict not in _NOT_BUILT or kb == "correct"
    if verdict == "timeout" and evidence.get("phase") == "compile":
        compiled = False
    return Verdict(
        verdict=verdict,  # type: ignore[typeddict-item]  # checked against STAGE above
        verdict_kernelbench=kb,  # type: ignore[typeddict-item]
        counted="strict",
        correct_kernelbench=kb == "correct",
        correct_strict=verdict == "correct",
        compiled=compiled,
        speedup_eager=speedup_eager,
        speedup_compile=speedup_compile,
        custom_kernel_share=custom_kernel_share,
        static_findings=static_findings or [],
        evidence=evidence,
        log_tail=log_tail,
    )


class Mismatch(TypedDict):
    """The first wrong element's values."""

    expected: float  # the region's PyTorch lines
    got: float  # the kernel


class RegionCheck(TypedDict, total=False):
    """One region kernel judged alone against its region's PyTorch lines (evaluator.regions.judge), on the
    GPU host: what names the region and the wrong element, which the whole program's verdict cannot. Apart
    from id and verdict, the keys are harness.compare's evidence; which of them are set depends on `reason`.
    A kernel that crashes or hangs ends the whole run (the program's verdict says so), so no check is a fault.
    """

    id: Required[str]  # the region's id, as in the job line's region marker
    verdict: Required[Literal["correct", "wrong_output"]]  # follows from ok
    ok: Required[bool]  # allclose(got, expected) at the job's atol and rtol
    # Why not ok: "values" (elements off), "nan_inf" (non-finite where the reference is finite), "shape",
    # "dtype", "type" (not a tensor), "value" (a non-tensor output differs), "structure" (output count).
    reason: str
    output: int  # which output failed (a region has one: 0); every reason but "structure"
    expected: list[int] | str  # "shape", "dtype", "value": the reference's shape, dtype or repr
    got: list[int] | str  # the same of the kernel's output ("type": its type's name)
    expected_outputs: int  # "structure": how many outputs the reference gave
    got_outputs: int  # "structure": how many the kernel gave
    first_mismatch_index: list[int]  # "values", "nan_inf": multi-index of the first wrong element
    first_mismatch: Mismatch  # "values", "nan_inf": its values
    mismatches: int  # "values", "nan_inf": how many elements are wrong
    numel: int  # "values", "nan_inf": how many elements the output has
    max_abs_err: float  # ok, "values", "nan_inf": the largest finite |got - expected|
    max_rel_err: float  # the same relative to |expected|
    ref_max_abs: float  # the largest finite |expected|: the scale the errors are read against
    # "values": the derived tolerance (evaluator.numerics, from the region's lines in float64) the largest
    # error was judged against once allclose called elements off; ok says whether it stayed within
    tolerance: float


_COMPARED = frozenset(RegionCheck.__annotations__) - {"id", "verdict"}


def region_check(region_id: str, compared: Mapping[str, Any]) -> RegionCheck:
    """A region's check from harness.compare's evidence; the verdict follows from `ok`. Keys RegionCheck does
    not document are refused, so every reader (triage, reports) reads the keys written here."""
    undocumented = sorted(set(compared) - _COMPARED)
    if undocumented or "ok" not in compared:
        raise ValueError(f"not a region comparison: undocumented {undocumented}, ok {'ok' in compared}")
    verdict = "correct" if compared["ok"] else "wrong_output"
    return cast(RegionCheck, {"id": region_id, "verdict": verdict, **compared})


def missing(job_id: str) -> Verdict:
    """The verdict of a job that came back without a result: a runtime error that says so."""
    return make("runtime_error", log_tail=f"no evaluator result for job {job_id}")


def summary(verdict: dict[str, Any] | None) -> dict[str, Any]:
    """The fields of a verdict that results files keep; None for each when there is no verdict."""
    verdict = verdict or {}
    return {name: verdict.get(name) for name in SUMMARY_FIELDS}


def rank(verdict: dict[str, Any] | None) -> tuple[bool, bool, float, int, bool]:
    """Sort key, larger is better: correct (strict, then KernelBench), speedup over eager of a correct
    one, how far through the pipeline it got, compiled. Accepts a full verdict or its `summary`."""
    verdict = verdict or {}
    strict, loose = bool(verdict.get("correct_strict")), bool(verdict.get("correct_kernelbench"))
    speedup = float(verdict.get("speedup_eager") or 0.0) if (strict or loose) else 0.0
    return strict, loose, speedup, STAGE.get(str(verdict.get("verdict")), 0), bool(verdict.get("compiled"))


T = TypeVar("T")


def best(items: Iterable[T], verdict_of: Callable[[T], dict[str, Any] | None]) -> T | None:
    """The best item by `rank`; ties go to the earliest, so a later equal one never displaces a found one."""
    found: T | None = None
    for item in items:
        if found is None or rank(verdict_of(item)) > rank(verdict_of(found)):
            found = item
    return found
