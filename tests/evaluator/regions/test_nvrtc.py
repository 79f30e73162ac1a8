"""The NVRTC binding without a GPU: compiles, diagnostics on their lines, repair text, finding the library."""

from __future__ import annotations

import pytest

from evaluator.regions import nvrtc

SIGNATURE = 'extern "C" __global__ void region_r0(const float* a, float* out, int64_t n, float s)'

GOOD = f"""typedef long long int64_t;
{SIGNATURE} {{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {{
        float v = a[i] * s;
        out[i] = v > 0.f ? v : 0.f;
    }}
}}
"""

BAD = GOOD.replace("float v = a[i] * s;", "float v = a[i] * scale_factor;")
BAD_LINE = 5



def test_compiles_a_grid_stride_kernel_to_ptx_fast(have_nvrtc: None) -> None:
    nvrtc.compile_kernel(GOOD)  # the first call loads the library and its builtins
    out = nvrtc.compile_kernel(GOOD)
    assert out.ok, out.log
    assert ".entry region_r0" in out.ptx
    assert out.errors == []
    assert out.seconds < 2.0


def test_undefined_identifier_is_a_diagnostic_on_its_line(have_nvrtc: None) -> None:
    out = nvrtc.compile_kernel(BAD)
    assert not out.ok and out.ptx == ""
    (err,) = out.errors
    assert err.line == BAD_LINE and err.severity == "error"
    assert "scale_factor" in err.message
    assert err.column == BAD.splitlines()[BAD_LINE - 1].index("scale_factor") + 1


def test_annotate_shows_the_line_and_a_caret_under_the_error(have_nvrtc: None) -> None:
    text = nvrtc.annotate(BAD, nvrtc.compile_kernel(BAD))
    head, code, caret = text.splitlines()
    assert head == 'error: identifier "scale_factor" is undefined'
    assert code.strip() == "float v = a[i] * scale_factor;"
    assert caret.strip() == "^" and code[caret.index("^") :].startswith("scale_factor")


def test_annotate_without_a_column_points_at_the_first_character() -> None:
    compiled = nvrtc.Compiled(False, "", "", 0.0, [nvrtc.Diagnostic(2, None, "error", "boom")])
    _, code, caret = nvrtc.annotate("int a;\n    b c;\n", compiled).splitlines()
    assert code[caret.index("^")] == "b"


def test_parse_log_reads_errors_warnings_and_option_errors() -> None:
    log = (
        'kernel.cu(3): error: identifier "foo" is undefined\n      o[0] = foo;\n             ^\n\n'
        'kernel.cu(2): warning #177-D: variable "x" was declared but never referenced\n\n'
        "nvrtc: error: invalid value for --gpu-architecture (-arch)\n"
    )
    assert nvrtc.parse_log(log) == [
        nvrtc.Diagnostic(3, 12, "error", 'identifier "foo" is undefined'),
        nvrtc.Diagnostic(2, None, "warning", 'variable "x" was declared but never referenced'),
        nvrtc.Diagnostic(None, None, "error", "invalid value for --gpu-architecture (-arch)"),
    ]


def test_an_explicit_path_to_nowhere_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(nvrtc.ENV_VAR, "/nowhere/libnvrtc.so")
    with pytest.raises(nvrtc.NvrtcUnavailable, match="/nowhere/libnvrtc.so"):
        nvrtc.find_library()


def test_no_library_anywhere_names_every_place_searched(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.delenv(nvrtc.ENV_VAR, raising=False)
    monkeypatch.setattr(nvrtc, "_wheel_libraries", lambda: [])
    monkeypatch.setattr(nvrtc, "_torch_site_dirs", lambda: [tmp_path / "nvidia"])
    with pytest.raises(nvrtc.NvrtcUnavailable) as info:
        nvrtc.find_library()
    message = str(info.value)
    assert nvrtc.ENV_VAR in message and nvrtc.WHEEL in message and str(tmp_path / "nvidia") in message
