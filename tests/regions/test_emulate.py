"""CPU emulation of a region kernel in an isolated worker: right values pass, wrong ones name the element,
hangs and crashes are contained."""

from __future__ import annotations

from regions.blocked_tiles import split
from regions.contract import render
from regions.emulate import emulate
from regions.model import Region, Step
from regions.model import TensorInfo as T
from regions.rules import rule_body

F = "float32"


def _softmax():
    x, out = T("x", (3, 5, 4), F), T("softmax", (3, 5, 4), F)
    step = Step(out, "torch.softmax", ("x",), (("dim", 1),), "softmax = torch.softmax(x, dim=1)")
    region = Region("r0", "reduce", ["softmax"], [x], out, [step])
    return region, render(region)


SOFTMAX = """float m = -INFINITY;
for (int64_t k = 0; k < R; ++k) m = fmaxf(m, x(k));
float s = 0.0f;
for (int64_t k = 0; k < R; ++k) s += expf(x(k) - m);
for (int64_t k = 0; k < R; ++k) out(k) = expf(x(k) - m) / s;"""


def test_right_values_pass_and_wrong_ones_name_the_element() -> None:
    region, contract = _softmax()
    assert emulate(region, contract, SOFTMAX).ok
    wrong = emulate(region, contract, SOFTMAX.replace("/ s;", "/ (s + 1.0f);"))
    assert not wrong.ok and wrong.error.startswith("out[") and "PyTorch gives" in wrong.error


def test_numeric_limits_work_under_nvrtc_and_on_the_host() -> None:
    from regions.check import check

    region, contract = _softmax()
    body = SOFTMAX.replace("float m = -INFINITY;", "float m = -std::numeric_limits<float>::max();")
    assert check(contract, body).ok and emulate(region, contract, body).ok
    body = SOFTMAX.replace("float m = -INFINITY;", "float m = -std::numeric_limits<float>::infinity();")
    assert check(contract, body).ok and emulate(region, contract, body).ok


def test_scalars_broadcasts_and_helpers_in_a_map() -> None:
    a, bias, out = T("A", (4, 6), F), T("bias", (6,), F), T("t2", (4, 6), F)
    steps = [
        Step(T("t1", (4, 6), F), "torch.mul", (), (), "t1 = A * s"),
        Step(out, "torch.add", (), (), "t2 = torch.nn.functional.gelu(t1 + bias)"),
    ]
    region = Region("r0", "map", ["t1", "t2"], [a, bias], out, steps, scalars=[("s", 1.5)])
    contract = render(region)
    assert emulate(region, contract, "float t1 = A * s;\nfloat t2 = kg_gelu(t1 + bias);").ok
    assert not emulate(region, contract, "float t1 = A * s;\nfloat t2 = kg_gelu_tanh(t1 + bias);").ok


def test_a_hang_and_a_crash_stay_in_the_worker() -> None:
    region, contract = _softmax()
    hang = emulate(region, contract, "float v = 0.0f;\nwhile (true) { v += 1.0f; }", timeout_s=5)
    assert not hang.ok and "did not finish" in hang.error
    crash = emulate(
        region, contract, "for (int64_t k = 0; k < (1LL << 40); ++k) out(k) = 1.0f;", timeout_s=20
    )
    assert not crash.ok and ("crashed" in crash.error or "did not finish" in crash.error)
    broken = emulate(region, contract, "float v = undefined_thing;")
    assert not broken.ok and "does not build" in broken.error


def test_the_skeleton_computes_the_row_max_and_sum_a_softmax_needs() -> None:
    """The max and the denominator are the framework's steps: one pass writing out(k) is right."""
    from regions.check import check

    region, contract = _softmax()
    assert "float row_max = -INFINITY;" in contract.head and "const float row_sum" in contract.head
    assert "row_max and row_sum: the row's largest value" in contract.facts
    body = "out(k) = expf(x(k) - row_max) / row_sum;"  # the loop over k is the framework's too
    assert check(contract, body).ok and emulate(region, contract, body).ok
    assert not emulate(region, contract, body.replace("/ row_sum", "/ (row_sum + 1.0f)")).ok
    assert check(contract, SOFTMAX).ok  # a body that computes its own max still works


def _sum_rows():
    x, out = T("x", (6, 9), F), T("total", (6,), F)
    step = Step(out, "torch.sum", ("x",), (("dim", 1),), "total = torch.sum(x, dim=1)")
    region = Region("r0", "reduce", ["total"], [x], out, [step])
    return region, render(region)


def test_a_fold_that_reads_k_without_its_loop_gets_the_skeletons_loop() -> None:
    """`result += x(k);` alone, in a fold whose loop the body owns, means it for each k; a body with its
    own loop and a softmax (whose loop is the framework's) are left as written."""
    from regions.check import check, extract_body

    region, contract = _sum_rows()
    body = extract_body("```cuda\nresult += x(k);\n```", contract)
    assert body.startswith(contract.loop) and check(contract, body).ok and emulate(region, contract, body).ok
    own = "for (int64_t k = 0; k < R; ++k) result += x(k);"
    assert extract_body(own, contract) == own
    softmax_region, softmax = _softmax()
    assert softmax.loop == "" and extract_body("out(k) = x(k);", softmax) == "out(k) = x(k);"


def test_the_kg_names_a_model_guesses_from_an_op_compile_and_mean_the_op() -> None:
    """kg_rsqrt, kg_clamp_max, kg_minf, kg_mul, kg_sqrtf: names the 1.5B wrote in failed repairs."""
    from regions.check import check

    x, out = T("x", (4, 8), F), T("y", (4, 8), F)
    step = Step(out, "torch.rsqrt", ("x",), (), "y = torch.rsqrt(x)")
    region = Region("r0", "map", ["y"], [x], out, [step])
    contract = render(region)
    name = contract.facts.split("each thread computes element i of out")[1].split("`")[1].split()[1]
    guessed = f"float {name} = kg_minf(kg_mul(kg_rsqrt(kg_sqrtf(x * x)), 1.0f), kg_clamp_max(9.0f, 1e30f));"
    assert check(contract, guessed).ok
    assert emulate(region, contract, guessed).ok  # rsqrt(|x|): PyTorch's NaN where x < 0 is not judged
    assert not emulate(region, contract, guessed.replace("kg_rsqrt", "kg_sqrt")).ok


def test_wrong_values_fail_the_local_checks_with_where_and_right_ones_pass(monkeypatch) -> None:
    import regions.emulate
    from regions.check import check
    from regions.emulate import judged_on_cpu

    monkeypatch.setattr(regions.emulate, "TIMEOUT_S", 5.0)
    region, contract = _softmax()
    assert judged_on_cpu(check(contract, SOFTMAX), (region, contract)).ok
    wrong = judged_on_cpu(check(contract, SOFTMAX.replace("/ s;", "/ (s + 1.0f);")), (region, contract))
    assert not wrong.ok and "computes wrong values: out[" in wrong.errors
    assert wrong.lint[-1]["code"] == "wrong_values"
    endless = judged_on_cpu(check(contract, "while (true) {}\n" + SOFTMAX), (region, contract))
    assert endless.ok or "did not finish" in endless.errors  # the host compiler may drop an empty loop


TWO = "torch.randn(rows, cols), torch.randn(rows, cols)"


def _problem(forward: str, sizes: str, inputs: str) -> str:
    return f"""
import math
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, w):
        return {forward}


{sizes}


def get_inputs():
    return [{inputs}]


def get_init_inputs():
    return []
"""


def _only_region(source: str):
    from regions.offering import offered

    ((chosen, _),) = [offered(source, "moderate")]
    return chosen[0][0]


def test_the_twin_is_the_region_itself_when_it_is_cheap_and_else_the_same_skeleton_shrunk() -> None:
    from regions.emulate import OWN_SIZE, small_twin

    cheap = _problem("x * 0.5 + w", "rows = 8\ncols = 8", TWO)
    region = _only_region(cheap)
    assert region.cost <= OWN_SIZE and small_twin(cheap, region)[0] is region
    big = _problem("x * 0.5 + w", "rows = 4096\ncols = 2048", TWO)
    region = _only_region(big)
    twin, contract = small_twin(big, region)
    assert region.cost > OWN_SIZE and twin.output.shape == (16, 16)
    assert emulate(twin, contract, "float t1 = x * 0.5f;\nfloat t2 = t1 + w;").ok
    assert not emulate(twin, contract, "float t1 = x * 0.5f;\nfloat t2 = t1 - w;").ok


def test_a_size_a_literal_stands_for_keeps_its_length() -> None:
    """A scale of 1/sqrt(size) changes with the size: shrunk with the problem, a right body would be called
    wrong on its twin. Narrowed on its own the region keeps the literal, and the size it stands for keeps
    its length, for a body that computes the scale from it; the other size shrinks."""
    from regions.emulate import small_twin

    scaled = _problem("x * (1.0 / math.sqrt(cols)) + w", "rows = 4096\ncols = 2048", TWO)
    twin, contract = small_twin(scaled, _only_region(scaled))
    assert [t.shape for t in twin.inputs] == [(2, 2048), (2, 2048)]
    assert emulate(twin, contract, "float t1 = x * (1.0f / sqrtf(2048.0f));\nfloat t2 = t1 + w;").ok
    unshrunk = _problem("x * 0.5 + w", "rows, cols = 8192, 8192", TWO)  # sizes the shrink cannot reach
    twin, _ = small_twin(unshrunk, _only_region(unshrunk))
    assert [t.shape for t in twin.inputs] == [(2, 4), (2, 4)]  # narrowed on its own instead


def test_a_long_sum_keeps_its_length_in_the_twin() -> None:
    """A product over K > 4096 declares a double accumulator; capped, its twin's K would not, so the twin
    keeps K long (8192) and caps the rest. A body that unrolls a fixed count of terms instead of looping to
    K (the 1.5B's rewrite of a matrix times a vector, judged wrong on the GPU) is caught there."""
    from regions.emulate import LONG_KEEP, small_twin

    long_k = _problem("torch.matmul(x, w)", "m = 2048\nk = 1048576", "torch.randn(m, k), torch.randn(k, 1)")
    region = _only_region(long_k)
    twin, contract = small_twin(long_k, region)
    assert [tuple(t.shape) for t in twin.inputs] == [(16, LONG_KEEP), (LONG_KEEP, 1)]
    loop = "for (int64_t k = 0; k < K; ++k) result += x(k) * w(k);"
    assert "double result" in contract.head and emulate(twin, contract, loop).ok
    unrolled = "\n".join(f"result += x({k}) * w({k});" for k in range(56))
    assert not emulate(twin, contract, unrolled).ok


def test_a_launch_of_blocks_runs_its_threads_together_and_adds_into_a_zeroed_output() -> None:
    """The split product: blocks of 256 threads staging tiles between barriers, four blocks adding their
    runs of K into the output atomically."""
    x, xt, out = T("x", (128, 8192), F), T("t0", (8192, 128), F), T("matmul", (128, 128), F)
    step = Step(out, "torch.matmul", ("x", "t0"), (), "matmul = torch.matmul(x, t0)")
    region = Region("r0", "contraction", ["matmul"], [x, xt], out, [step])
    contract = split(region)
    assert contract.launch["zero"] and contract.launch["grid"] == [1, 1, 4]
    body = rule_body(region, render(region))
    assert emulate(region, contract, body).ok
    wrong = emulate(region, contract, body.replace("k < K", "k < K - 1"))
    assert not wrong.ok and wrong.error.startswith("out[")


def test_the_blocked_product_adds_each_k_into_running_sums_as_the_gpu_would() -> None:
    """The blocked shape runs the body for each k of a staged slice into each output's running sum: right
    for the rule's line and for the 1.5B's `acc` habit as the framework reads it (`result += acc;`), and
    wrong where a body sets `result` (it drops the earlier slices' sum: the check refuses it, and here the
    values show it) or skips a term."""
    from regions.blocked_tiles import blocked
    from regions.check import extract_body

    x, w, out = T("x", (256, 37), F), T("w", (37, 128), F), T("matmul", (256, 128), F)  # K ragged
    step = Step(out, "torch.matmul", ("x", "w"), (), "matmul = torch.matmul(x, w)")
    region = Region("r0", "contraction", ["matmul"], [x, w], out, [step])
    contract = blocked(region)
    assert contract.launch["grid"] == [1, 2, 1] and "float result = kg_total[kg_i][kg_j];" in contract.head
    assert emulate(region, contract, rule_body(region, render(region))).ok
    habit = "float acc = 0.0f;\nfor (int64_t k = 0; k < K; ++k) acc += x(k) * w(k);\nresult = acc;"
    assert emulate(region, contract, extract_body(habit, contract)).ok
    assert not emulate(region, contract, habit).ok  # as written it keeps only the last k of each slice
    assert not emulate(region, contract, "result += x(0) * w(0) * (kg_k < 7);").ok
