"""The lint of region bodies: no torch or Python in device code, the framework's signature intact."""

from __future__ import annotations

import pytest

from regions.lint import RULES, lint_body, lint_source

SIGNATURE = 'extern "C" __global__ void region_r0(const float* a, float* out, int64_t n, float s)'
GOOD = f"""typedef long long int64_t;
{SIGNATURE} {{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {{
        out[i] = a[i] * s;
    }}
}}
"""


RULE_CASES = [
    ("torch_api", "out[i] = torch::relu(a[i]);"),
    ("torch_api", "at::Tensor t;"),
    ("torch_api", "out[i] = torch.sigmoid(a[i]);"),
    ("python", "import math"),
    ("python", "def f(x):"),
    ("python", "out[i] = self.scale * a[i];"),
    ("python", "float v = a[i].item();"),
    ("python", "print(v)"),
    ("module_call", "out[i] = LeakyReLU(0.1f)(a[i]);"),
    ("module_call", "float y = Conv2d(a[i]);"),
    ("module_call", "out[i] = GELU(a[i]);"),
    ("host_call", "float* t = (float*)malloc(4);"),
    ("host_call", "cudaMalloc(&t, 4);"),
    ("kernel_definition", "__global__ void helper(float* x) {"),
    ("kernel_definition", 'extern "C" void region_r0(const float* a, float* out, int64_t n, float s) {'),
    ("include", "#include <cuda_runtime.h>"),
    ("return_value", "return out[i];"),
]


@pytest.mark.parametrize(("code", "body"), RULE_CASES)
def test_each_rule_catches_its_case(code: str, body: str) -> None:
    assert code in {f.code for f in lint_body(body)}


def test_every_rule_has_a_case() -> None:
    assert {code for code, _ in RULE_CASES} == {code for code, _, _ in RULES}


def test_a_clean_body_has_no_findings() -> None:
    body = (
        "// t3 = torch.relu(t2 * s), as the contract wrote it\n"
        "float v = a[i] * s;  /* self.scale folded into s */\n"
        "out[i] = v > 0.f ? v : 0.f;\n"
        'if (i == 0) printf("%f\\n", v);\n'
        "out[i] = kg_leaky_relu(out[i], 0.1f) + fmaxf(v, 0.f) + (float)IDX(i);\n"
        "__shared__ float tile[32];\n"
        "if (v != v) return;\n"
    )
    assert lint_body(body) == []


def test_findings_carry_the_body_line() -> None:
    (finding,) = lint_body("float v = a[i];\n/* two\nlines */\nout[i] = torch::relu(v);\n")
    assert (finding.code, finding.line) == ("torch_api", 4)


def test_the_signature_line_must_survive_assembly() -> None:
    assert lint_source("#define X 1\n  " + GOOD, SIGNATURE) == []
    dropped = GOOD.replace('extern "C" ', "")
    (finding,) = lint_source(dropped, SIGNATURE)
    assert finding.code == "signature_changed" and SIGNATURE in finding.message
