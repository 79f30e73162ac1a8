"""evaluator.numerics in-process: the derived tolerance accepts what float32 itself does differently
(summation order, blocking) and rejects approximations, whatever the seed; the fallbacks say why."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from evaluator import harness, numerics
from evaluator.config import EvalConfig

CPU = torch.device("cpu")
CONFIG = EvalConfig(backend="cpu")


class Gelu(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x)


class MatMul(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a @ b


class Softmax(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


class Exp(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.exp(x)


class NoDouble(nn.Module):
    """Its own float32 constant: float64 inputs meet a float32 matrix and matmul refuses."""

    def __init__(self) -> None:
        super().__init__()
        self.w = torch.rand(8, 8)  # a plain attribute: .double() leaves it alone

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.w


class CastsBack(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(x).float()


class ValuesAndIndices(nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return x.max(dim=1)


def _setup(
    model: nn.Module,
    make: Callable[[], list[Any]],
    config: EvalConfig = CONFIG,
    seconds_per_call: float = 0.01,
) -> tuple[numerics.Tolerances, Callable[[list[Any]], Any], Callable[[int], list[Any]]]:
    def call_ref(args: list[Any]) -> Any:
        with torch.no_grad():
            return model(*args)

    def gen(seed: int) -> list[Any]:
        torch.manual_seed(seed)
        return make()

    deriver = numerics.Deriver(config, model, call_ref, CPU, seconds_per_call)
    return numerics.derive_tolerances(config, deriver, gen, [11, 12, 13, 14, 15]), call_ref, gen


def _gelu_verdict(candidate: Callable[[torch.Tensor], torch.Tensor], seed: int) -> dict[str, Any]:
    config = CONFIG.replace(seed=seed)
    model = Gelu()
    tols, call_ref, gen = _setup(model, lambda: [torch.rand(256, 1024)], config)
    errors = [numerics.output_errors(candidate(gen(s)[0]), call_ref(gen(s))) for s in range(seed, seed + 5)]
    return numerics.judge(errors, tols.standard)


@pytest.mark.parametrize("seed", [42, 7, 1234])
def test_tanh_gelu_is_always_beyond_and_erf_gelu_always_within(seed: int) -> None:
    tanh = _gelu_verdict(lambda x: F.gelu(x, approximate="tanh"), seed)
    assert tanh["within_reference_numerics"] is False and tanh["worst_ratio"] > 10, tanh
    erf = _gelu_verdict(lambda x: 0.5 * x * (1 + torch.erf(x * 0.7071067811865476)), seed)
    assert erf["within_reference_numerics"] is True and erf["worst_ratio"] < 0.1, erf
    assert erf["derived_on_trials"] == CONFIG.numerics_trials


def test_the_evidence_names_the_tolerance_and_its_parts() -> None:
    v = _gelu_verdict(lambda x: F.gelu(x, approximate="tanh"), 42)
    floor = CONFIG.numerics_floor_ulps * torch.finfo(torch.float32).eps * v["scale"]
    assert v["tolerance"] == pytest.approx(max(CONFIG.numerics_factor * v["reference_error"], floor))
    assert v["worst_ratio"] == pytest.approx(v["candidate_error"] / v["tolerance"], rel=1e-3)
    assert 0 < v["reference_error"] < 1e-6 and v["float64_seconds"] >= 0


def _blocked(a: torch.Tensor, b: torch.Tensor, slices: int) -> torch.Tensor:
    """The same product summed in another order: K split into slices, each a float32 product, added."""
    parts = [x @ y for x, y in zip(a.chunk(slices, dim=1), b.chunk(slices, dim=0), strict=True)]
    return torch.stack(parts).sum(dim=0)


def test_summation_order_is_within_and_float16_operands_are_not_on_signed_inputs() -> None:
    tols, call_ref, gen = _setup(MatMul(), lambda: [torch.rand(64, 4096), torch.rand(4096, 64)])
    a, b = numerics.signed_inputs(gen, CONFIG)
    ref = call_ref([a, b])
    reordered = numerics.judge([numerics.output_errors(_blocked(a, b, 64), ref)], tols.signed)
    assert reordered["within_reference_numerics"], reordered
    half = numerics.judge([numerics.output_errors(a.half().float() @ b.half().float(), ref)], tols.signed)
    assert half["within_reference_numerics"] is False and half["worst_ratio"] > 2, half


def test_x100_inputs_scale_the_tolerance_where_atol_does_not() -> None:
    """A blocked 4096-term sum at x100: KernelBench's atol/rtol rejects it, the derived tolerance does not."""
    tols, call_ref, gen = _setup(MatMul(), lambda: [torch.rand(64, 4096), torch.rand(4096, 64)])
    inputs = numerics.extreme_inputs(gen, CONFIG)
    ref = call_ref(inputs)
    res = numerics.strict_compare(_blocked(*inputs, 64), ref, tols.extreme, CONFIG, fallback="output_scale")
    assert res["ok"] and res["numerics"]["within_reference_numerics"], res
    assert res["atol_rtol_ok"] is False  # the fixed tolerance would have called it wrong


def test_softmax_without_max_subtraction_fails_the_extreme_trial() -> None:
    model = Softmax()
    tols, call_ref, gen = _setup(model, lambda: [torch.rand(16, 512)])

    def naive(args: list[Any]) -> torch.Tensor:
        e = torch.exp(args[0])
        return e / e.sum(dim=1, keepdim=True)

    bad = numerics.extreme_trial(CONFIG, call_ref, naive, gen, CPU, tols.extreme)
    assert bad["ok"] is False and bad["reason"] == "nan_inf" and not bad["mutated_inputs"], bad
    good = numerics.extreme_trial(
        CONFIG, call_ref, lambda a: torch.softmax(a[0], dim=1), gen, CPU, tols.extreme
    )
    assert good["ok"] and good["numerics"]["within_reference_numerics"], good


def test_a_reference_that_overflows_skips_the_extreme_trial() -> None:
    tols, call_ref, gen = _setup(Exp(), lambda: [torch.rand(8, 8)])
    assert tols.standard.outputs is not None and tols.extreme.outputs is None
    assert "not finite" in (tols.extreme.skipped or "")
    res = numerics.extreme_trial(CONFIG, call_ref, lambda a: torch.exp(a[0]), gen, CPU, tols.extreme)
    assert "ok" not in res and "not finite" in res["skipped"]


def test_a_reference_that_cannot_run_in_float64_falls_back_and_says_so() -> None:
    model = NoDouble()
    tols, call_ref, gen = _setup(model, lambda: [torch.rand(4, 8)])
    assert tols.standard.outputs is None and "cannot run in float64" in (tols.standard.skipped or "")
    verdict = numerics.judge([[None]], tols.standard)
    assert verdict["within_reference_numerics"] is None and verdict["fallback"] == "atol_rtol"
    assert torch.get_default_dtype() == torch.float32 and model.w.dtype == torch.float32


def test_a_reference_that_casts_back_to_float32_has_no_float64_truth() -> None:
    tols, _, _ = _setup(CastsBack(), lambda: [torch.rand(4, 8)])
    assert tols.standard.outputs is None and "casts back" in (tols.standard.skipped or "")


def test_the_reference_model_stays_float32() -> None:
    model = nn.Linear(16, 4)
    _setup(model, lambda: [torch.rand(3, 16)])
    assert all(p.dtype == torch.float32 for p in model.parameters())


def test_a_slow_reference_gets_no_float64_run() -> None:
    tols, _, _ = _setup(
        Gelu(), lambda: [torch.rand(4, 4)], seconds_per_call=CONFIG.numerics_max_reference_s + 1
    )
    assert tols.standard.outputs is None and "numerics_max_reference_s" in (tols.standard.skipped or "")


def test_the_float64_budget_stops_later_derivations() -> None:
    tols, _, _ = _setup(Gelu(), lambda: [torch.rand(4, 4)], CONFIG.replace(numerics_budget_s=0.0))
    assert tols.standard.outputs is not None and tols.standard.trials == 1  # the first always runs
    assert "numerics_budget_s" in (tols.signed.skipped or "") and tols.extreme.outputs is None


def test_disabled_numerics_fall_back() -> None:
    tols, _, _ = _setup(Gelu(), lambda: [torch.rand(4, 4)], CONFIG.replace(numerics=False))
    assert tols.standard.outputs is None and "disabled" in (tols.standard.skipped or "")


def test_output_errors_read_non_finite_candidates_and_skip_non_floating_outputs() -> None:
    ref = (torch.tensor([1.0, float("inf"), -2.0]), torch.tensor([0, 1, 2]))
    got = (torch.tensor([1.5, float("inf"), float("nan")]), torch.tensor([0, 1, 2]))
    errors = numerics.output_errors(got, ref)
    assert errors[0] is not None and math.isinf(errors[0].error) and errors[0].scale == 2.0
    assert errors[1] is None
    finite = numerics.output_errors((torch.tensor([1.5, float("inf"), -2.0]), ref[1]), ref)[0]
    assert finite is not None and finite.error == 0.5  # where the reference is not finite: not judged


def test_chunked_errors_equal_whole_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    torch.manual_seed(0)
    ref, got = torch.randn(1000), torch.randn(1000)
    whole = numerics.output_errors(got, ref)
    monkeypatch.setattr(harness, "_CHUNK", 7)
    assert numerics.output_errors(got, ref) == whole


def test_non_floating_outputs_keep_kernelbench_check() -> None:
    tols, call_ref, gen = _setup(ValuesAndIndices(), lambda: [torch.rand(32, 64)])
    inputs = numerics.signed_inputs(gen, CONFIG)
    ref = call_ref(inputs)
    assert tols.signed.outputs is not None and tols.signed.outputs[1] is None
    same = numerics.strict_compare(ref, ref, tols.signed, CONFIG, fallback="atol_rtol")
    assert same["ok"]
    wrong_index = (ref[0], ref[1].flip(0))
    assert numerics.strict_compare(wrong_index, ref, tols.signed, CONFIG, fallback="atol_rtol")["ok"] is False


def test_zero_outputs_need_exact_zeros() -> None:
    """An all-zero reference has no error and no scale: only zeros are within it."""
    tol = numerics.Derived(outputs=[numerics.OutputTolerance(0.0, 0.0, 0.0)], trials=1)
    zero = torch.zeros(4)
    assert numerics.judge([numerics.output_errors(zero, zero)], tol)["within_reference_numerics"]
    off = numerics.judge([numerics.output_errors(zero + 1e-9, zero)], tol)
    assert off["within_reference_numerics"] is False and math.isinf(off["worst_ratio"])


def test_structural_mismatch_fails_without_numbers() -> None:
    tol = numerics.Derived(outputs=[numerics.OutputTolerance(1e-7, 1.0, 1e-5)], trials=1)
    res = numerics.strict_compare(torch.zeros(3), torch.zeros(4), tol, CONFIG, fallback="atol_rtol")
    assert res["ok"] is False and res["reason"] == "shape"


def test_output_scale_fallback_on_the_extreme_trial() -> None:
    none = numerics.Derived(skipped="no float64 here")
    ref = torch.tensor([100.0, -50.0])
    near = numerics.strict_compare(ref + 0.5, ref, none, CONFIG, fallback="output_scale")
    far = numerics.strict_compare(ref + 2.0, ref, none, CONFIG, fallback="output_scale")
    assert near["ok"] and far["ok"] is False and near["numerics"]["fallback"] == "output_scale"


def test_extreme_inputs_span_the_range_and_leave_other_values() -> None:
    torch.manual_seed(0)
    mapped = numerics.extreme([torch.rand(10000), torch.arange(3), 2.5], 100.0)
    assert -100.0 <= float(mapped[0].min()) < -99.0 and 99.0 < float(mapped[0].max()) < 100.0
    assert torch.equal(mapped[1], torch.arange(3)) and mapped[2] == 2.5
