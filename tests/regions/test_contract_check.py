"""Contracts by region kind and the local checks, with real NVRTC compiles (no GPU needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from regions.check import check, extract_body
from regions.contract import BODY_MARK, render
from regions.library import HELPERS
from regions.model import Region, RegionError, Step
from regions.model import TensorInfo as T

F = "float32"


def _map_region() -> Region:
    """Level 2 problem 2's epilogue: conv output + bias, clamp, scale, clamp, divide."""
    shape = (4, 8, 6, 6)
    x, bias = T("conv_transpose", shape, F), T("bias", (8, 1, 1), F)
    codes = [
        ("add", "torch.add", "add = conv_transpose + bias"),
        ("clamp", "torch.clamp", "clamp = torch.clamp(add, min=0.0, max=1.0)"),
        ("mul", "torch.mul", "mul = clamp * 2.0"),
        ("clamp_1", "torch.clamp", "clamp_1 = torch.clamp(mul, min=0.0, max=1.0)"),
        ("truediv", "torch.div", "truediv = clamp_1 / 2.0"),
    ]
    steps = [Step(T(name, shape, F), target, (), (), code) for name, target, code in codes]
    return Region("r1", "map", [s.out.name for s in steps], [x, bias], steps[-1].out, steps)


MAP_BODY = """float t1 = conv_transpose + bias;
float t2 = kg_clamp(t1, 0.0f, 1.0f);
float t3 = t2 * 2.0f;
float t4 = kg_clamp(t3, 0.0f, 1.0f);
float t5 = t4 / 2.0f;"""


def test_map_contract_owns_index_loads_and_store_and_renames_steps() -> None:
    contract = render(_map_region())
    assert contract.signature.startswith('extern "C" __global__ void region_r1(')
    assert "const float bias = p_bias[c1];" in contract.head  # the broadcast operand, preloaded
    assert "const float conv_transpose = p_conv_transpose[i];" in contract.head
    assert "p_out[i] = t5;" in contract.tail and contract.head.endswith(BODY_MARK)
    assert "t2 = torch.clamp(t1, min=0.0, max=1.0)" in contract.facts  # fx names never reach the model
    assert "clamp_1" not in contract.facts and "kg_clamp(a, min, max)" in contract.facts
    assert contract.launch["count"] == 4 * 8 * 6 * 6 and contract.launch["inputs"] == [
        "conv_transpose",
        "bias",
    ]


def test_a_good_body_compiles_and_a_bad_one_gets_its_line_and_caret() -> None:
    contract = render(_map_region())
    good = check(contract, MAP_BODY)
    assert good.ok and good.compile_seconds < 2.0 and good.errors == ""
    bad = check(contract, MAP_BODY.replace("kg_clamp(t1", "clamp(t1"))
    assert not bad.ok and 'identifier "clamp" is undefined' in bad.errors
    assert "float t2 = clamp(t1, 0.0f, 1.0f);" in bad.errors and "^" in bad.errors


def test_lint_stops_torch_in_device_code_before_compiling() -> None:
    checked = check(render(_map_region()), MAP_BODY + "\nfloat t6 = torch.relu(t5);")
    assert not checked.ok and checked.lint and checked.compile_log == ""


def test_extract_body_drops_what_the_model_repeated_from_the_skeleton() -> None:
    contract = render(_map_region())
    answer = (
        "Here:\n```cuda\n        const float bias = p_bias[c1];\n"
        + MAP_BODY
        + "\np_out[i] = t5;\n    }\n}\n```"
    )
    assert extract_body(answer, contract) == MAP_BODY
    assert extract_body(MAP_BODY, contract) == MAP_BODY  # no fence: the whole answer
    loop = "float s = 0.0f;\nfor (int64_t k = 0; k < 4; ++k) {\n    s += t5;\n}"
    assert extract_body(f"```cuda\n{loop}\n}}\n}}\n```", contract) == loop  # its own brace stays
    # the tail in the model's words: its own store of the output and the braces after it
    assert extract_body(f"```cuda\n{MAP_BODY}\n    }}\n    p_out[0] = t5 ;\n}}\n```", contract) == MAP_BODY
    keyword = "float t2 = kg_leaky_relu(t1, negative_slope=0.01);\nfloat t3 = fmaxf(t2, b = 1.0f);"
    plain = "float t2 = kg_leaky_relu(t1, 0.01);\nfloat t3 = fmaxf(t2, 1.0f);"
    assert extract_body(keyword, contract) == plain
    mode = "auto t1 = kg_gelu(pooled(), approximate='none');\nfloat t2 = kg_elu(kg_abs(t1), alpha = 1.0f);"
    modeless = "auto t1 = kg_gelu(pooled());\nfloat t2 = kg_elu(kg_abs(t1), 1.0f);"
    assert extract_body(mode, contract) == modeless
    unended = "t1 = pooled() + bias\nfloat t2 = kg_tanh(t1)  \nfloat t3 = (t2\n    + 1.0f);"
    assert extract_body(unended, contract) == (
        "float t1 = pooled() + bias;\nfloat t2 = kg_tanh(t1);\nfloat t3 = (t2\n    + 1.0f);"
    )
    loop = "for (int64_t k = 0, j = 0; k < 4; ++k) s += kg_max(s, x == y);"
    assert extract_body(loop, contract) == loop  # a loop's own `=`, and `==`, are not keywords
    inside = "for (int64_t k = 0; k < 4; ++k) {\n    s += t5;\n    p_out[i] = s;\n}"
    assert extract_body(inside, contract) == "for (int64_t k = 0; k < 4; ++k) {\n    s += t5;\n}"


def test_reduce_contract_reads_the_row_through_an_accessor() -> None:
    x, out = T("x", (16, 300), F), T("softmax", (16, 300), F)
    step = Step(out, "torch.softmax", ("x",), (("dim", 1),), "softmax = torch.softmax(x, dim=1)")
    contract = render(Region("r0", "reduce", ["softmax"], [x], out, [step]))
    assert "R = 300;" in contract.head and "auto out = " in contract.head and "INNER" not in contract.head
    body = """float m = -INFINITY;
for (int64_t k = 0; k < R; ++k) m = fmaxf(m, x(k));
float s = 0.0f;
for (int64_t k = 0; k < R; ++k) s += expf(x(k) - m);
for (int64_t k = 0; k < R; ++k) out(k) = expf(x(k) - m) / s;"""
    assert check(contract, body).ok
    assert contract.launch["count"] == 16


def test_sum_over_a_middle_dim_and_a_long_matmul() -> None:
    x, out = T("x", (4, 5, 6), F), T("sum_1", (4, 6), F)
    step = Step(out, "torch.sum", ("x",), (("dim", 1),), "sum_1 = torch.sum(x, dim=1)")
    contract = render(Region("r0", "reduce", ["sum_1"], [x], out, [step]))
    assert "R = 5;" in contract.head and "base = (i / 6) * 30 + i % 6;" in contract.head
    assert check(contract, "float s = 0.0f;\nfor (int64_t k = 0; k < R; ++k) s += x(k);\nresult = s;").ok
    a, b, c = T("A", (64, 1 << 20), F), T("B", (1 << 20, 1), F), T("matmul", (64, 1), F)
    mm = render(
        Region(
            "r0",
            "contraction",
            ["matmul"],
            [a, b],
            c,
            [Step(c, "torch.matmul", ("A", "B"), (), "matmul = torch.matmul(A, B)")],
        )
    )
    assert (
        "double result = 0.0;  // add every term A(k) * B(k) to it" in mm.head
    )  # the skeleton's accumulator is double
    assert check(mm, "for (int64_t k = 0; k < K; ++k) result += A(k) * B(k);").ok
    body = (
        "double acc = 0.0;\nfor (int64_t k = 0; k < K; ++k) acc += (double)A(k) * B(k);\nresult = (float)acc;"
    )
    assert extract_body(body, mm).endswith("result += (float)acc;") and check(mm, extract_body(body, mm)).ok


def test_a_direct_convolution_reads_the_input_under_each_tap_with_padding() -> None:
    x, w, b = T("x", (2, 3, 8, 8), F), T("weight", (4, 3, 3, 3), F), T("bias", (4,), F)
    out = T("conv2d", (2, 4, 8, 8), F)
    kwargs = (("stride", (1, 1)), ("padding", (1, 1)), ("dilation", (1, 1)), ("groups", 1))
    step = Step(out, "torch.nn.functional.conv2d", ("x", "weight", "bias"), kwargs, "conv2d = F.conv2d(x)")
    contract = render(Region("r0", "contraction", ["conv2d"], [x, w, b], out, [step]))
    assert "C = 3, K0 = 3, K1 = 3" in contract.head and ": 0.0f;" in contract.head  # zero in the padding
    body = """float acc = 0.0f;
for (int64_t c = 0; c < C; ++c)
    for (int64_t k0 = 0; k0 < K0; ++k0)
        for (int64_t k1 = 0; k1 < K1; ++k1)
            acc += x(c, k0, k1) * weight(c, k0, k1);
result = acc + bias[o];"""
    assert check(contract, body).ok
    grouped = Step(out, step.target, step.args, (*kwargs[:3], ("groups", 2)), step.code)
    in_groups = render(Region("r0", "contraction", ["conv2d"], [x, w, b], out, [grouped]))
    assert "(o / " in in_groups.head and "of channel o's group" in in_groups.facts  # c counts its group's


def test_regions_without_a_skeleton_say_why() -> None:
    x, out = T("x", (1, 3, 8, 8), F), T("pool", (1, 3, 4, 4), F)
    step = Step(
        out, "torch.nn.functional.max_pool2d", ("x",), (), "pool = torch.nn.functional.max_pool2d(x, 2)"
    )
    with pytest.raises(RegionError, match="no contract"):
        render(Region("r0", "contraction", ["pool"], [x], out, [step]))
    with pytest.raises(RegionError, match="float32"):
        render(
            Region(
                "r0",
                "map",
                ["neg"],
                [T("x", (4,), "float16")],
                T("neg", (4,), "float16"),
                [Step(T("neg", (4,), "float16"), "torch.neg", ("x",), (), "neg = -x")],
            )
        )


def test_pytorch_names_of_prelude_helpers_are_read_as_the_helpers() -> None:
    contract = render(_map_region())
    answer = MAP_BODY.replace("float t5 = t4 / 2.0f;", "float t5 = torch.sigmoid(torch.tanh(t4));")
    assert "float t5 = kg_sigmoid(kg_tanh(t4));" in extract_body(answer, contract)
    assert {"kg_tanh", "kg_exp", "kg_max", "kg_gelu"} <= set(HELPERS)  # every helper the prelude defines
    unknown = "float t6 = torch.nn.functional.conv2d(t5);"  # no such helper: left for the lint to name
    assert extract_body(unknown, contract) == unknown


def test_std_names_of_math_functions_are_read_as_device_functions() -> None:
    """NVRTC has neither <cmath> nor <algorithm>; l2_p6's greedy softmax failed on nothing else."""
    contract = render(_map_region())
    answer = MAP_BODY.replace("float t5 = t4 / 2.0f;", "float t5 = std::expf(std::max(t4, 0.0f));")
    body = extract_body(answer, contract)
    assert "float t5 = expf(kg_max(t4, 0.0f));" in body
    assert check(contract, body).ok
    kept = "float t6 = std::vector<float>(t5);"  # not math: left for the lint to name
    assert extract_body(kept, contract) == kept


def test_an_error_about_a_name_is_answered_with_what_exists() -> None:
    contract = render(_map_region())
    typo = check(contract, MAP_BODY.replace("kg_clamp(t1", "kg_clmp(t1"))
    assert not typo.ok and "`kg_clmp` is not a helper here; the nearest: kg_clamp" in typo.errors
    late = check(contract, "float t1 = conv_transpose + m;\nfloat m = bias;\n" + MAP_BODY.split("\n", 1)[1])
    assert "`m` is used on body line 1 but declared only on body line 2" in late.errors
    unknown = check(contract, MAP_BODY.replace("t2 * 2.0f", "scale * 2.0f"))
    assert "`scale` is not declared anywhere; the names this kernel declares:" in unknown.errors
    assert "conv_transpose, bias" in unknown.errors and "t4" in unknown.errors  # parameters, loads, steps
    assert "What exists" not in check(contract, MAP_BODY).errors


def test_same_code_ignores_comments_and_whitespace_only() -> None:
    from regions.check import same_code

    assert same_code("float t1 = x;  // the input\n", "/* copy */ float t1 =\n    x;")
    assert not same_code("float t1 = x;", "float t1 = -x;")


def test_only_ops_that_subtract_a_max_get_the_row_max() -> None:
    x = T("x", (16, 300), F)
    for target, shifted in (("torch.logsumexp", True), ("torch.log_softmax", True), ("torch.sum", False)):
        out = T("r", (16,) if target != "torch.log_softmax" else (16, 300), F)
        step = Step(out, target, ("x",), (("dim", 1),), f"r = {target}(x, dim=1)")
        contract = render(Region("r0", "reduce", ["r"], [x], out, [step]))
        assert ("row_max = fmaxf(row_max, x(k));" in contract.head) is shifted, target


def test_a_loop_counter_is_answered_with_its_loop() -> None:
    x, out = T("x", (16, 300), F), T("scan", (16, 300), F)
    step = Step(out, "torch.cumsum", ("x",), (("dim", 1),), "scan = torch.cumsum(x, dim=1)")
    contract = render(Region("r0", "reduce", ["scan"], [x], out, [step]))
    stray = check(contract, "float s = 0.0f;\ncarry += x(k);\nout(k) = carry;")
    assert "`k` is the counter of the loop your body writes over the row: `for (int64_t k = 0;" in (
        stray.errors
    )
    assert "the names this kernel declares" not in stray.errors
    other = check(contract, "carry += x(j);\nout(0) = carry;")
    names = "p_x, p_out, R, base, x, out, carry."
    assert f"`j` is not declared anywhere; the names this kernel declares: {names}" in other.errors


def test_every_op_a_loop_kind_takes_has_a_glossary_line() -> None:
    """The model is told what each op means, never left to recall it: every op a region can hold (the
    ops the decompositions produce included) has its line."""
    from regions.library import GLOSSARY
    from regions.partition import CONTRACTION, MAP
    from regions.reduce import REDUCE_OPS
    from regions.window import WINDOW

    ops = MAP | REDUCE_OPS | CONTRACTION | set(WINDOW)
    assert sorted(op for op in ops if op not in GLOSSARY) == []
    assert "rintf" in GLOSSARY["torch.round"]  # PyTorch rounds halves to even


def test_a_body_that_declares_the_skeletons_result_again_assigns_it(families_dir: Path) -> None:
    """The 1.5B copies the skeleton's declaration line with its own type (`float result = 0.0f;` where the
    skeleton holds `double result`): read as an assignment, it compiles; a body's own names stay declared."""
    from evaluator.problem import load_problem
    from regions.check import extract_body
    from regions.offering import offered

    problem = load_problem(families_dir / "level1/12_Huber_Loss_Mean.py")
    *_, (region, contract) = offered(problem.source, "moderate")[0]
    assert "double result = 0.0;" in contract.head
    x = region.inputs[0].name
    loop = f"for (int64_t k = 0; k < R; ++k) result += {x}(k);"
    answer = f"```cuda\nfloat result = 0.0f;\nfloat s = 0.0f;\n{loop}\n```"
    body = extract_body(answer, contract)
    assert body.splitlines()[:2] == ["result = 0.0f;", "float s = 0.0f;"]
    assert check(contract, body).ok


def test_a_body_that_leaves_out_an_input_or_its_result_is_refused() -> None:
    """A product's `result` holds its sum so far and every input takes part: a body of only the epilogue's
    line adds nothing to it and reads neither operand."""
    a, b, out = T("a", (4, 8), F), T("b", (8, 3), F), T("mm", (4, 3), F)
    step = Step(out, "torch.matmul", ("a", "b"), (), "mm = torch.matmul(a, b)")
    contract = render(Region("r0", "contraction", ["mm"], [a, b], out, [step]))
    unset = check(contract, "float acc = 0.0f;  // result = acc later\nfloat t1 = acc / 2.0f;")
    assert not unset.ok and [f["code"] for f in unset.lint] == ["unused"] * 3
    assert "never reads `a`" in unset.errors and "never adds to `result`" in unset.errors
    assert check(contract, "for (int64_t k = 0; k < K; ++k) result += a(k) * b(k);").ok


def test_a_product_body_adds_to_its_result_and_never_sets_it() -> None:
    """On a staged shape `result` starts at the earlier slices' sum: a body that sets it drops them. The
    1.5B's habits are read as additions where that means the same sum (`float result = 0.0f;` goes, one
    `result = acc;` never read adds); a body that sets it otherwise is refused with why."""
    a, b, out = T("a", (4, 8), F), T("b", (8, 3), F), T("mm", (4, 3), F)
    step = Step(out, "torch.matmul", ("a", "b"), (), "mm = torch.matmul(a, b)")
    contract = render(Region("r0", "contraction", ["mm"], [a, b], out, [step]))
    assert "float result = 0.0f;  // add every term a(k) * b(k) to it" in contract.head
    summed = "float acc = 0.0f;\nfor (int64_t k = 0; k < K; ++k) acc += a(k) * b(k);\nresult = acc;"
    refused = check(contract, summed)
    assert not refused.ok and "setting it drops what it holds" in refused.errors
    body = extract_body(f"```cuda\nfloat result = 0.0f;\n{summed}\n```", contract)
    assert body.splitlines() == [
        "float acc = 0.0f;",
        "for (int64_t k = 0; k < K; ++k) acc += a(k) * b(k);",
        "result += acc;",
    ]
    assert check(contract, body).ok
    twice = "result = a(0) * b(0);\nfor (int64_t k = 1; k < K; ++k) result = result + a(k) * b(k);"
    assert extract_body(twice, contract) == twice and not check(contract, twice).ok  # its first line sets it


def test_a_fold_over_numbered_elements_instead_of_r_is_refused() -> None:
    """A mean's body that adds x(0) and x(1) is right on a two-element twin and wrong at any other size."""
    x, out = T("x", (4, 2), F), T("m", (4,), F)
    step = Step(out, "torch.mean", ("x",), (("dim", 1),), "m = torch.mean(x, dim=1)")
    contract = render(Region("r0", "reduce", ["m"], [x], out, [step]))
    fixed = check(contract, "result += x(0);\nresult += x(1);")
    assert not fixed.ok and "never reads `R`" in fixed.errors
    assert check(contract, "for (int64_t k = 0; k < R; ++k) result += x(k);").ok
    assert check(contract, extract_body("result += x(k);", contract)).ok  # the loop is given to it
