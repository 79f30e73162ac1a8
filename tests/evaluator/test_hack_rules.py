"""The rules against four reward hacks, piece by piece, in this process (the whole rules, through real
workers and C++ builds, are in test_hack_rules_cpu.py; on CUDA kernels, in the GPU suite):

1. a custom kernel that only copies or casts its input is not work (evaluator.copycheck);
2. a kernel counts as the candidate's only if it was launched outside every ATen op
   (profiling.kernel_launches);
3. a sample of the timed calls' outputs is compared with the reference's (timing.Timer);
4. the judge's own code and the libraries it judges with must not change (evaluator.integrity, guard).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest
import torch

from evaluator import copycheck, harness, integrity, profiling, timing
from evaluator.buildcache import BuildRecorder, ExtensionProxy

CPU = torch.device("cpu")
REPO = Path(__file__).resolve().parents[2]


# ---------------------------------------------------------------- 1. copies are not work


def _kind(fn: Any, *args: Any) -> str:
    probe = copycheck.CallProbe(args, {})
    return probe.classify(fn(*args))


def _signed(*shape: int) -> torch.Tensor:
    return torch.rand(*shape, generator=torch.Generator().manual_seed(0)) * 2 - 1


def test_a_call_that_gives_back_its_input_is_a_copy_whatever_the_form() -> None:
    x = _signed(8, 16)
    assert _kind(lambda a: a.clone(), x) == "copy"
    assert _kind(lambda a: a.half(), x) == "copy"  # a cast: equal after casting to the result's dtype
    assert _kind(lambda a: a, x) == "copy"  # the argument itself, untouched
    assert _kind(lambda a: a.reshape(-1).contiguous(), x) == "copy"
    assert _kind(lambda a, out: (out.copy_(a), None)[1], x, torch.zeros_like(x)) == "copy"  # written into
    with_nan = x.clone()
    with_nan[0, 0] = math.nan
    assert _kind(lambda a: a.clone(), with_nan) == "copy"  # NaN equal to NaN


def test_real_kernels_on_signed_inputs_are_work() -> None:
    x, w = _signed(8, 16), _signed(16, 16)
    assert _kind(torch.relu, x) == "work"
    assert _kind(lambda a: a.relu_(), x.clone()) == "work"  # in place: its values changed
    assert _kind(lambda a: a * 3.14, x) == "work"
    assert _kind(lambda a, b: a @ b, x, w) == "work"
    assert _kind(lambda a, b: (a @ b, a), x, w) == "work"  # one real result is enough
    assert _kind(lambda a, out: (torch.clamp(a, min=0.0, out=out), None)[1], x, torch.zeros_like(x)) == "work"
    assert _kind(lambda a: float(a.sum()), x) == "work"  # a number it computed: not judged a copy
    assert _kind(lambda a: None, x) == "none"


class _Ext:
    """Stands in for a compiled extension: the build cache wraps any module the same way."""

    @staticmethod
    def copy(x: torch.Tensor) -> torch.Tensor:
        return x.clone()

    @staticmethod
    def relu(x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)

    @staticmethod
    def hardtanh(x: torch.Tensor) -> torch.Tensor:
        return x.clamp(-1.0, 1.0)


def _trial(forward: Any, reference: Any) -> dict[str, Any]:
    recorder = BuildRecorder()
    ext = ExtensionProxy(types.SimpleNamespace(**vars(_Ext)), recorder)
    result = copycheck.copy_trial(
        recorder,
        lambda args: reference(*args),
        lambda args: forward(ext, *args),
        lambda: [_signed(32, 32)],
    )
    assert recorder.copy_calls is None  # the check is on for its two calls only
    return result


def test_the_answer_from_another_op_through_a_copying_kernel_is_flagged() -> None:
    flagged = _trial(lambda ext, x: ext.copy(torch.clamp(x, min=0.0)), torch.relu)
    assert flagged["only_copies"], flagged
    assert flagged["variants"]["signed"] == {"verdict": "copy", "calls": {"copy": 1}}


def test_legit_kernels_are_not_flagged() -> None:
    assert not _trial(lambda ext, x: ext.relu(x), torch.relu)["only_copies"]
    two = _trial(lambda ext, x: ext.copy(ext.relu(x)), torch.relu)  # one copy beside real work
    assert not two["only_copies"] and two["variants"]["signed"]["calls"] == {"copy": 1, "work": 1}


def test_a_clamp_that_is_the_identity_on_signed_inputs_is_judged_on_wide_ones() -> None:
    """hardtanh(-1, 1) gives signed inputs back unchanged, kernel and reference alike: that variant says
    nothing; on inputs four times as wide the kernel clamps, and a copying one is caught there."""
    legit = _trial(lambda ext, x: ext.hardtanh(x), lambda x: x.clamp(-1.0, 1.0))
    assert not legit["only_copies"]
    assert "skipped" in legit["variants"]["signed"] and legit["variants"]["wide"]["verdict"] == "work"
    hack = _trial(lambda ext, x: ext.copy(x.clamp(-1.0, 1.0)), lambda x: x.clamp(-1.0, 1.0))
    assert hack["only_copies"]


def test_a_forward_that_raises_on_one_variant_cannot_hide_the_other() -> None:
    def forward(ext: Any, x: torch.Tensor) -> torch.Tensor:
        if x.abs().max() > 1:
            raise RuntimeError("only [-1, 1)")
        return ext.copy(torch.relu(x))

    result = _trial(forward, torch.relu)
    assert result["only_copies"] and "skipped" in result["variants"]["wide"]


# ---------------------------------------------------------------- 2. kernels under ATen ops are library work


def _profile(with_device_events: bool = True) -> Any:
    """A profile built the way torch.autograd.profiler._parse_kineto_results builds one: CPU ops (their id
    is the correlation id their kernels are linked by), runtime calls, CUDA kernels appended to the op
    they were launched under, then EventList._build_tree (parents by time, duplicate nodes lifted)."""
    from torch.autograd import DeviceType
    from torch.autograd.profiler_util import EventList, FunctionEvent

    def cpu(id_: int, name: str, start: float, end: float, linked: int = 0) -> FunctionEvent:
        return FunctionEvent(id_, name, thread=1, start_us=start, end_us=end, linked_correlation_id=linked)

    ops = {
        10: cpu(10, "aten::div", 0, 50),  # the wrapper's at::div: its kernel carries ATen's name
        20: cpu(20, "aten::linear", 300, 400),
        21: cpu(21, "aten::addmm", 301, 399),  # kernels hang on the innermost op
        30: cpu(30, "MyAutogradFunction", 500, 600),  # not an ATen op: what runs under it is the candidate's
        40: cpu(40, "aten::add_", 700, 800),
        41: cpu(41, "aten::add_", 701, 799),  # a sole same-named child: lifted into its parent, kernels too
    }
    events = [*ops.values(), cpu(11, "aten::empty_like", 1, 2), cpu(900, "cudaLaunchKernel", 10, 12, 10)]
    vectorized = "void at::native::vectorized_elementwise_kernel<4, at::native::{}<float> >"
    launches = [  # (CUPTI id, kernel, launched under op, device start, end)
        (900, vectorized.format("BUnaryFunctor"), 10, 100, 150),
        (901, "scale_kernel(float const*, float*, float, long)", 0, 200, 260),  # the wrapper's own launch
        (902, "sm90_xmma_gemm_f32f32_tn_n", 21, 310, 390),
        (903, "my_kernel(float*)", 30, 510, 610),
        (904, vectorized.format("CUDAFunctor_add"), 41, 720, 730),
    ]
    for cid, name, op, start, end in launches:
        if op:
            ops[op].append_kernel(name, 0, end - start)
        if with_device_events:
            events.append(
                FunctionEvent(
                    cid,
                    name,
                    thread=7,
                    start_us=start,
                    end_us=end,
                    device_type=DeviceType.CUDA,
                    linked_correlation_id=op,
                )
            )
    listed = EventList(events, use_device="cuda")
    listed._build_tree()
    return types.SimpleNamespace(events=lambda: listed)


def test_kernels_launched_inside_aten_ops_are_library_work_whatever_their_name() -> None:
    launched = profiling.kernel_launches(_profile())
    launches = {name.split("(")[0].split("<")[0]: lib for name, _, lib in launched}
    assert launches == {
        "void at::native::vectorized_elementwise_kernel": True,  # both: under aten::div, under aten::add_
        "scale_kernel": False,
        "sm90_xmma_gemm_f32f32_tn_n": True,
        "my_kernel": False,
    }
    assert sum(lib for *_, lib in profiling.kernel_launches(_profile())) == 3


def test_a_global_named_like_atens_kernel_gets_none_of_its_time() -> None:
    """The masquerade: a `__global__ vectorized_elementwise_kernel` that never runs beside at::div."""
    launched = profiling.kernel_launches(_profile())
    spent = profiling.custom_kernel_time(launched, {"vectorized_elementwise_kernel"})
    assert spent["custom_us"] == 0 and spent["library_named_like_custom"] == 2
    assert spent["total_us"] == 50 + 60 + 80 + 100 + 10
    own = profiling.custom_kernel_time(profiling.kernel_launches(_profile()), {"scale_kernel", "my_kernel"})
    assert own["custom_us"] == 160 and own["library_named_like_custom"] == 0


def test_without_device_events_the_kernel_lists_alone_attribute() -> None:
    launches = profiling.kernel_launches(_profile(with_device_events=False))
    assert sorted((name[:20], lib) for name, _, lib in launches) == [  # a launch under no op is in none
        ("my_kernel(float*)", False),
        ("sm90_xmma_gemm_f32f3", True),
        ("void at::native::vec", True),
        ("void at::native::vec", True),
    ]


def test_a_cpu_profile_has_no_kernels() -> None:
    x = torch.rand(8, 8)
    assert profiling.kernel_launches(profiling.profile_forward(lambda: x @ x, CPU)) == []


# ---------------------------------------------------------------- 3. timed outputs are compared


def _compare(out: Any, ref: Any) -> dict[str, Any]:
    return harness.compare(out, ref, 1e-4, 1e-4)


def _make(i: int) -> list[torch.Tensor]:
    return [torch.rand(4, 4, generator=torch.Generator().manual_seed(i)) * 2 - 1]


def test_a_forward_that_serves_a_cached_output_while_timed_is_caught() -> None:
    """Warm-up calls get the same inputs several times in a row; from then on this forward hands back
    what it computed last, so every timed output is stale."""
    state: dict[str, Any] = {"prev": None, "streak": 0, "out": None}

    def cached(args: list[torch.Tensor]) -> torch.Tensor:
        state["streak"] = state["streak"] + 1 if args[0] is state["prev"] else 1
        state["prev"] = args[0]
        if state["streak"] == 1 and state["out"] is not None and state.get("timed"):
            return state["out"]
        state["timed"] = state.get("timed") or state["streak"] >= 3
        state["out"] = torch.relu(args[0])
        return state["out"]

    timer = timing.Timer(CPU, 1024)
    ref, cand = timer.measure_many(
        [lambda a: torch.relu(a[0]), cached],
        _make,
        warmup=4,
        trials=12,
        trusted=[True, False],
        check=_compare,
    )
    check = cand["output_check"]
    assert not check["ok"] and check["mismatch"]["reason"] == "values", check
    assert "output_check" not in ref  # the reference is what the others are compared with
    assert 11 in check["trials"] and all(t % 2 == 1 for t in check["trials"])  # the last, candidate first


def test_an_honest_forward_passes_even_beside_a_reference_that_writes_its_inputs() -> None:
    def ref_in_place(args: list[torch.Tensor]) -> torch.Tensor:
        return args[0].relu_()  # legal for the reference; the candidate runs first in the compared trials

    timer = timing.Timer(CPU, 1024, budget_s=None, min_trials=4)
    _, cand = timer.measure_many(
        [ref_in_place, lambda a: torch.relu(a[0])], _make, 2, 9, trusted=[True, False], check=_compare
    )
    assert cand["output_check"]["ok"] and 1 <= len(cand["output_check"]["trials"]) <= 3
    assert cand["trials"] == 9


def test_a_forward_that_draws_random_numbers_draws_the_reference_ones() -> None:
    """As in the correctness trials (each call right after seeding): no false mismatch from dropout-like
    draws the candidate makes exactly as the reference does."""

    def noisy(args: list[torch.Tensor]) -> torch.Tensor:
        return args[0] + torch.rand_like(args[0])

    timer = timing.Timer(CPU, 1024)
    _, cand = timer.measure_many([noisy, noisy], _make, 1, 6, trusted=[True, False], check=_compare)
    assert cand["output_check"]["ok"], cand["output_check"]


def test_only_the_sampled_outputs_are_kept() -> None:
    """At most the held trial's pair and the call in progress: outputs of other trials go at once."""
    alive, peak = [0], [0]

    class Out:
        def __init__(self, value: float) -> None:
            self.value = value
            alive[0] += 1
            peak[0] = max(peak[0], alive[0])

        def __del__(self) -> None:
            alive[0] -= 1

    def same(out: Any, ref: Any) -> dict[str, Any]:
        return {"ok": out.value == ref.value}

    timer = timing.Timer(CPU, 1024)
    _, cand = timer.measure_many(
        [lambda a: Out(1.0), lambda a: Out(1.0)], lambda i: [], 1, 40, trusted=[True, False], check=same
    )
    assert cand["output_check"]["ok"] and peak[0] <= 3 and alive[0] == 0


def test_without_a_check_or_a_reference_nothing_is_compared() -> None:
    timer = timing.Timer(CPU, 1024)
    (alone,) = timer.measure_many([lambda a: a[0] * 2], _make, 1, 5, trusted=[False], check=_compare)
    (plain,) = timer.measure_many([lambda a: a[0] * 2], _make, 1, 5)
    assert "output_check" not in alone and "output_check" not in plain


# ---------------------------------------------------------------- 4. the judge is not the candidate's


@pytest.fixture(scope="module")
def snapshot() -> integrity.JudgeSnapshot:
    import evaluator.phase_run  # noqa: F401 - the worker's modules, as loaded in a run worker

    snap = integrity.JudgeSnapshot()
    assert snap.changes() == []
    return snap


def test_patches_through_aliases_and_sys_modules_are_named_and_undone(
    snapshot: integrity.JudgeSnapshot,
) -> None:
    import time as clock

    import torch.cuda as tc

    real_clock, real_compare = clock.perf_counter, harness.compare
    real_elapsed = tc.Event.elapsed_time
    summary_code = timing.Timer._summary.__code__
    try:
        clock.perf_counter = lambda: 0.0
        tc.Event.elapsed_time = lambda self, end: 1e-3
        sys.modules["evaluator.harness"].compare = lambda *a, **k: {"ok": True}
        torch.Tensor.allclose = lambda *a, **k: True  # shadows the C method of its base
        timing.Timer._summary.__code__ = (lambda events, walls, trials, trusted: {}).__code__
        changed = snapshot.changes()
    finally:
        clock.perf_counter, harness.compare, tc.Event.elapsed_time = real_clock, real_compare, real_elapsed
        timing.Timer._summary.__code__ = summary_code
        vars(torch.Tensor).get("allclose") and delattr(torch.Tensor, "allclose")  # type: ignore[func-returns-value]
    assert set(changed) == {
        "time.perf_counter",
        "torch.cuda.streams.Event.elapsed_time",
        "evaluator.harness.compare",
        "torch.Tensor.allclose",
        "evaluator.timing.Timer._summary",
    }
    assert snapshot.changes() == []  # undone at once (and the finally found nothing left to undo)


def test_what_legit_candidates_do_changes_nothing_watched(snapshot: integrity.JudgeSnapshot) -> None:
    torch.manual_seed(0)
    before = torch.backends.cudnn.benchmark
    torch.backends.cudnn.benchmark = True
    model = torch.nn.Linear(8, 8)
    model.register_buffer("scale", torch.ones(8))
    torch.Tensor.my_helper = lambda self: self  # a new name on a class is not a change
    try:
        x = torch.rand(4, 8)
        profiling.profile_forward(lambda: model(x), CPU).events()  # the profiler imports torch._dynamo
        torch.autograd.Function  # noqa: B018
        assert snapshot.changes() == []
    finally:
        torch.backends.cudnn.benchmark = before
        del torch.Tensor.my_helper


def test_a_stage_change_checks_and_the_finish_reports(tmp_path: Path) -> None:
    from evaluator.runtime import Result

    result = Result(str(tmp_path / "result.json"))
    watch = integrity.watch_stages(result, integrity.JudgeSnapshot())
    result.update(stage="load")
    real = harness.compare
    harness.compare = lambda *a, **k: {"ok": True}
    result.update(stage="reference")  # the check runs as the stage changes, and undoes the patch
    assert harness.compare is real and watch.changed == ["evaluator.harness.compare"]
    result.update(timing={"candidate": {"ms": 1.0}}, speedup_eager=9.0, strict_failures=[])
    integrity.finish(result, watch)
    data = json.loads((tmp_path / "result.json").read_text())
    assert data["strict_failures"] == ["judge_tampered"] and data["speedup_eager"] is None
    assert data["strict"]["judge_tampered"] == ["evaluator.harness.compare"]
    assert data["timing"]["untrusted"]


def test_the_sandbox_refuses_importing_the_judge_at_run_time() -> None:
    """In a fresh process (audit hooks cannot be removed): an import statement raises the `import` event;
    importlib.import_module does not, but the module it loads runs through exec, which does."""
    code = """
import importlib, json
import torch  # loaded before the sandbox switches on, as in a worker
from evaluator import guard
guard.install(["/tmp"], lambda: False)
guard.Guard.active = True
seen = {}
for name in ["evaluator.static_checks", "evaluator.regions.launch", "json.tool"]:
    try:
        importlib.import_module(name)
        seen[name] = "ok"
    except PermissionError:
        seen[name] = "refused"
try:
    exec("import evaluator.extract")
    seen["statement"] = "ok"
except PermissionError:
    seen["statement"] = "refused"
guard.Guard.active = False
print(json.dumps(seen))
"""
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {
        "evaluator.static_checks": "refused",
        "evaluator.regions.launch": "ok",  # what a region program imports
        "json.tool": "ok",
        "statement": "refused",
    }
