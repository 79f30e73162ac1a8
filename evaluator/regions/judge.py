"""A region kernel judged alone against its region's own PyTorch lines, on signed random inputs of the
region's shapes: on this host's CPU emulation (regions.emulate) and, in the run worker, on the
GPU host's real shapes (the per-region verdict of a region candidate)."""

from __future__ import annotations

import math
from typing import Any

import torch

from evaluator import guard, harness
from evaluator.config import EvalConfig
from evaluator.numerics import output_errors, to_float64, tolerance_for
from evaluator.verdict import RegionCheck, region_check

SCALAR_STAND_IN = 0.5  # a scalar the forward takes as an input (no traced value): any value judges the math


def region_inputs(
    region: dict[str, Any], seed: int, device: torch.device
) -> tuple[list[torch.Tensor], list[float]]:
    """Signed inputs in [-1, 1) of the region's shapes (relu-like shortcuts fail on them), and its scalars."""
    gen = torch.Generator(device=device).manual_seed(seed)
    inputs = [
        torch.rand(t["shape"], generator=gen, device=device, dtype=torch.float32) * 2 - 1
        for t in region["inputs"]
    ]
    scalars = [float(v) if v is not None else SCALAR_STAND_IN for _, v in region["scalars"]]
    return inputs, scalars


def region_reference(
    region: dict[str, Any],
    inputs: list[torch.Tensor],
    scalars: list[float],
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """The region's own PyTorch lines (framework-written, from the trace) on the same inputs, the value
    as `dtype` (float64 for the reference's own error)."""
    scope: dict[str, Any] = {"torch": torch}
    scope.update(zip([t["name"] for t in region["inputs"]], inputs, strict=True))
    scope.update(zip([s for s, _ in region["scalars"]], scalars, strict=True))
    for step in region["steps"]:
        exec(step["code"], scope)  # noqa: S102 - the trace's own rendering of the reference
    value = scope[region["steps"][-1]["out"]["name"]]
    return (value if value.dtype == torch.int64 else value.to(dtype)).contiguous()  # indices stay indices


def judge_region(
    marker: dict[str, Any], candidate: Any, seed: int, config: EvalConfig, device: torch.device
) -> RegionCheck:
    """One kernel of a loaded region candidate (a job line's region marker says where it is) against its
    region: feedback that names the region and the element (a multi-index, expected and got), which the
    whole program's verdict cannot. The kernel runs under the worker's sandbox guard. Values allclose
    calls off are judged again by the program's strict rule (evaluator.numerics): a long sum in another
    order differs from PyTorch's float32 by more than atol and still within what float32 costs the region
    (measured: a 4096-term product on 64 x 64 register blocks, 2 of 16.8M elements off by 4e-4)."""
    region = marker["spec"]
    inputs, scalars = region_inputs(region, seed, device)
    with torch.no_grad():
        expected = region_reference(region, inputs, scalars)
        guard.Guard.active = True
        try:
            got = getattr(getattr(candidate, marker["module"]), marker["launch"])(*inputs, *scalars)
            harness.sync(device)
        finally:
            guard.Guard.active = False
    if isinstance(got, torch.Tensor) and got.shape == expected.shape:
        expected, got = defined_only(expected, got)
    compared = harness.compare(got, expected, config.atol, config.rtol)
    if compared.get("reason") == "values":
        compared = _within_reference_numerics(compared, region, inputs, scalars, expected, config)
    return region_check(marker["id"], compared)


def _within_reference_numerics(
    compared: dict[str, Any],
    region: dict[str, Any],
    inputs: list[torch.Tensor],
    scalars: list[float],
    expected: torch.Tensor,
    config: EvalConfig,
) -> dict[str, Any]:
    """`compared` with ok set by the derived tolerance: a multiple of |float32 - float64| of the region's
    lines, never below a few ulps of the output's scale; unchanged where the lines do not run in float64."""
    try:
        with torch.no_grad():
            exact = region_reference(region, to_float64(inputs), scalars, torch.float64)
    except (RuntimeError, TypeError):  # an op without a float64 kernel: allclose's word stands
        return compared
    (reference,) = output_errors(expected, exact)  # over the elements where float64 is finite
    if reference is None or math.isinf(reference.error):  # another shape, or float32 overflows there:
        return compared  # no float64 truth to derive from (as evaluator.numerics), allclose's word stands
    tolerance = tolerance_for(reference.error, reference.scale, torch.float32, config)
    ok = compared["max_abs_err"] <= tolerance
    return {**compared, "ok": ok, "tolerance": tolerance}


def defined_only(expected: torch.Tensor, got: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Both tensors with the elements where PyTorch itself gives NaN (rsqrt of a random signed "variance")
    set to 0: there the kernel cannot be told wrong. The GPU's check and the CPU emulation
    (evaluator.phase_emulate) judge the same elements."""
    if not expected.is_floating_point():
        return expected, got
    undefined = expected.isnan()
    return expected.masked_fill(undefined, 0.0), got.masked_fill(undefined.to(got.device), 0.0)
