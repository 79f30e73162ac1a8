"""Triage rules: the real error out of a noisy log, and one focused instruction per failure kind."""

from __future__ import annotations

from nodes.prompt_files import fragment
from nodes.triage import error_note, real_error, rule_feedback
from retrieval_corpus import error_notes
from retrieval_corpus.error_notes import ErrorNote, parse_note, triage_rules

BUILD_LOG = """\
[1/3] c++ -MMD -MF main.o.d -DTORCH_EXTENSION_NAME=add_ext -O3 -c main.cpp -o main.o
main.cpp:4:9: warning: unused variable 'n' [-Wunused-variable]
[2/3] nvcc -c cuda.cu -o cuda.cuda.o
cuda.cu(12): error: identifier "blockDim_x" is undefined
1 error detected in the compilation of "cuda.cu".
ninja: build stopped: subcommand failed.
"""


def v(kind: str, log: str = "", **extra: object) -> dict[str, object]:
    return {"verdict": kind, "log_tail": log, **extra}


def test_real_error_drops_warnings_and_build_noise() -> None:
    error = real_error(v("compile_error", BUILD_LOG))
    assert error.splitlines()[0] == 'cuda.cu(12): error: identifier "blockDim_x" is undefined'
    assert "warning" not in error and "[1/3]" not in error


def test_an_undeclared_identifier_gets_write_it_yourself() -> None:
    feedback = rule_feedback(v("compile_error", BUILD_LOG))
    assert feedback["category"] == "undeclared" and "`blockDim_x` is not declared" in feedback["instruction"]


# torch 2.11 on the H200: the build command is echoed twice around nvcc's error (paths shortened).
NVCC_LOG = """\
RuntimeError: Error building extension 'matmul_ext': [1/3] /usr/local/cuda/bin/nvcc -MD -MF cuda.cuda.o.d \
-DTORCH_EXTENSION_NAME=matmul_ext -isystem /opt/torch/include -gencode=arch=compute_90a,code=sm_90a \
--compiler-options '-fPIC' -std=c++17 -c /tmp/cache/builds/matmul_ext_fa13/cuda.cu -o cuda.cuda.o
FAILED: [code=2] cuda.cuda.o
/usr/local/cuda/bin/nvcc -MD -DTORCH_EXTENSION_NAME=matmul_ext -c /tmp/b/cuda.cu -o cuda.cuda.o
/tmp/cache/builds/matmul_ext_fa13/cuda.cu(9): error: expression must have arithmetic or unscoped enum type
      if (i < M * N) C[i] = A[i] * s;
                                   ^

1 error detected in the compilation of "/tmp/cache/builds/matmul_ext_fa13/cuda.cu".
[2/3] /opt/gcc/bin/g++ -MMD -MF main.o.d -DTORCH_EXTENSION_NAME=matmul_ext -c /tmp/b/main.cpp -o main.o
ninja: build stopped: subcommand failed.
"""


def test_nvcc_error_comes_with_its_source_line_and_without_the_echoed_command() -> None:
    error = real_error(v("compile_error", NVCC_LOG))
    assert error.splitlines()[:3] == [
        "RuntimeError: Error building extension 'matmul_ext'",
        "cuda.cu(9): error: expression must have arithmetic or unscoped enum type",
        "if (i < M * N) C[i] = A[i] * s;",
    ]
    assert "nvcc" not in error and "-isystem" not in error
    assert rule_feedback(v("compile_error", NVCC_LOG))["instruction"] == (
        "Fix this compile error and change nothing else: cuda.cu(9): error: expression must have "
        "arithmetic or unscoped enum type at: if (i < M * N) C[i] = A[i] * s;"
    )


def test_a_function_listed_for_load_inline_but_never_declared() -> None:
    log = ("RuntimeError: Error building extension 'add_ext': [1/3] g++ -c main.cpp\n"
           "/tmp/b/main.cpp: In function 'void pybind11_init_add_ext(pybind11::module_&)':\n"
           "/tmp/b/main.cpp:4:47: error: ‘add_cuda’ was not declared in this scope\n"
           '    4 | m.def("add_cuda", torch::wrap_pybind_function(add_cuda), "add_cuda");\n')
    feedback = rule_feedback(v("compile_error", log))
    assert feedback["category"] == "functions_mismatch"
    assert 'functions=["add_cuda"]' in feedback["instruction"]


# From a real run of the 1.5B model on the cpu backend (paths shortened).
GCC_LOG = """c++ -MMD -MF main.o.d -fPIC -O3 -fopenmp -c /root/.cache/kg/builds/ext_c41e/main.cpp -o main.o
/root/.cache/kg/builds/ext_c41e/main.cpp: In function 'at::Tensor fused(at::Tensor, float)':
/root/.cache/kg/builds/ext_c41e/main.cpp:13:22: error: expected primary-expression before '.' token
   13 |         po[i] = torch.nn.functional.leaky_relu(px[i], slope) * scale + shift;
      |                      ^
/work/.venv/lib/site-packages/torch/include/ATen/core/interned_strings.h:351:1: note:   'c10::aten::add'
ninja: build stopped: subcommand failed.
"""


def test_compile_error_quotes_the_error_and_its_source_line_without_paths() -> None:
    error = real_error(v("compile_error", GCC_LOG))
    assert error.splitlines()[:2] == [
        "main.cpp:13:22: error: expected primary-expression before '.' token",
        "13 |         po[i] = torch.nn.functional.leaky_relu(px[i], slope) * scale + shift;"]
    assert "/root" not in error and "note" not in error
    feedback = rule_feedback(v("compile_error", GCC_LOG))
    assert feedback["category"] == "compile_error"
    assert "expected primary-expression before '.' token" in feedback["instruction"]


def test_missing_load_inline_import_gets_the_import_line() -> None:
    log = ('Traceback (most recent call last):\n  File "c.py", line 5\n'
           "NameError: name 'load_inline' is not defined")
    feedback = rule_feedback(v("runtime_error", log))
    assert feedback["category"] == "missing_import"
    assert "from torch.utils.cpp_extension import load_inline" in feedback["instruction"]


def test_undefined_name_module_call_illegal_access_and_shape() -> None:
    assert (
        "`weight`"
        in rule_feedback(v("runtime_error", "NameError: name 'weight' is not defined"))["instruction"]
    )
    assert (
        rule_feedback(v("runtime_error", "TypeError: 'module' object is not callable"))["category"]
        == "module_called"
    )
    assert (
        rule_feedback(
            v("runtime_error", "RuntimeError: CUDA error: an illegal memory access was encountered")
        )["category"]
        == "illegal_access"
    )
    assert (
        rule_feedback(v("wrong_output", "output shape mismatch: (8, 4) vs (8,)"))["category"] == "wrong_shape"
    )


def test_no_code_static_reject_timeout_and_slow_are_ruled() -> None:
    assert rule_feedback(v("no_code"))["category"] == "no_code"
    finding = {"code": "torch_fallback", "severity": "hack", "message": "forward calls torch.relu", "line": 9}
    reject = rule_feedback(v("static_reject", static_findings=[finding]))
    assert "forward calls torch.relu" in reject["instruction"]
    assert rule_feedback(v("timeout"))["category"] == "timeout"
    assert "0.9x" in rule_feedback(v("correct", speedup_eager=0.9))["instruction"]


def test_a_plain_wrong_output_is_left_to_the_model_with_the_evidence_in_words() -> None:
    mismatch = {"ok": False, "max_abs_err": 7.2268, "mismatches": 523915, "numel": 524288, "reason": "values",
                "first_mismatch_index": [0, 0], "first_mismatch": {"expected": 0.56632906, "got": -0.2091835}}
    wrong = v("wrong_output", "", evidence={"mismatch": mismatch, "seconds": {"build": 72.0}})
    assert rule_feedback(wrong) is None
    assert real_error(wrong) == ("523915 of 524288 output values are wrong (max abs error 7.227); first at "
                                 "index [0, 0]: expected 0.5663, got -0.2092.")


def test_a_wrong_shape_in_the_evidence_is_ruled() -> None:
    mismatch = {"ok": False, "reason": "shape", "output": 0, "expected": [512, 1], "got": [512]}
    feedback = rule_feedback(v("wrong_output", "", evidence={"mismatch": mismatch}))
    assert feedback["category"] == "wrong_shape"


def test_a_bare_call_to_a_compiled_function_is_sent_through_the_module() -> None:
    # From a real 1.5B candidate: forward called the extension's function as a bare Python name.
    code = ('add_ext = load_inline(name="add_ext", cpp_sources=cpp_source, functions=["add_cpu", '
            '"final_output_cpu"])\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n'
            '        return final_output_cpu(add_cpu(x, x), 1.0)\n')
    log = ('  File "/tmp/kg_run/kg_candidate.py", line 77, in forward\n'
           "NameError: name 'final_output_cpu' is not defined")
    feedback = rule_feedback(v("runtime_error", log), code)
    assert feedback["category"] == "unbound_extension_function"
    assert "`add_ext.final_output_cpu(...)`" in feedback["instruction"]
    assert rule_feedback(v("runtime_error", log))["category"] == "undefined_name"


def test_the_models_comparison_becomes_one_instruction() -> None:
    from nodes.triage import _parse_reply

    # The real 1.5B reply on demo task 1 (greedy): it found the wrong line but could not fix it.
    reply = ('{"reference_math": "leaky_relu(x, slope) * scale + shift", "kernel_math": "elementwise_cpu", '
             '"wrong_line": "po[i] = std::max(px[i] * slope, 0.0f) * scale + shift;", '
             '"fixed_line": "po[i] = std::max(px[i] * slope, 0.0f) * scale + shift;"}')
    assert _parse_reply(reply)["instruction"] == (
        "The line `po[i] = std::max(px[i] * slope, 0.0f) * scale + shift;` computes wrong values: make it "
        "compute `leaky_relu(x, slope) * scale + shift` for each element.")
    assert _parse_reply("{not json")["diagnosis"] == "unparseable triage reply"


def test_error_note_prefers_the_note_matching_the_real_error() -> None:
    log = "RuntimeError: CUDA error: an illegal memory access was encountered"
    assert "if (idx < n)" in error_note("runtime_error", log)
    # no pattern matches this text: the category's alias decides
    assert "zeros_like" in error_note("wrong_shape", "values differ")
    assert error_note("no_such_category", "nothing recognisable") == ""


def test_every_rule_of_the_table_has_an_instruction_fragment() -> None:
    for rule in triage_rules():
        assert "{{" not in fragment(f"triage/{rule.category}", {"name": "n"}), rule.category


def _note(note_id: str, rules: str) -> ErrorNote:
    front = f'title: t\nphase: runtime\npatterns: ["zzz"]\nsample: zzz\nrules: {rules}'
    return parse_note(note_id, f"---\n{front}\n---\nFix.\n")


def test_the_error_notes_rule_table_drives_triage(monkeypatch) -> None:
    # both rules match; the lower order wins, whatever the note order
    notes = (_note("a", '[{"order": 2, "category": "module_called", "pattern": "XYZZY"}]'),
             _note("b", '[{"order": 1, "category": "undefined_name", "pattern": "XYZZY (\\\\w+)"}]'))
    monkeypatch.setattr(error_notes, "_packaged_notes", lambda: notes)
    assert rule_feedback(v("runtime_error", "XYZZY plugh")) == {
        "category": "undefined_name", "instruction": fragment("triage/undefined_name", {"name": "plugh"})}
    not_ruled = rule_feedback(v("runtime_error", "NameError: name 'weight' is not defined"))
    assert not_ruled["category"] == "runtime_error"
