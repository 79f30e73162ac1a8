"""Hand-written C++ candidates for the `cpu` backend: one shared extension source (built once for the
whole suite, through the build cache) and one forward per behaviour under test."""

from __future__ import annotations

EXTENSION = r"""
#include <torch/extension.h>

torch::Tensor relu_ok(torch::Tensor x) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const float* in = xc.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (int64_t i = 0; i < xc.numel(); ++i) out[i] = in[i] > 0.f ? in[i] : 0.f;
    return y;
}

torch::Tensor relu_wrong(torch::Tensor x) {
    auto y = torch::empty_like(x);
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = in[i] > 0.5f ? in[i] : 0.f;
    return y;
}

torch::Tensor copy_only(torch::Tensor x) {
    auto y = torch::empty_like(x);
    std::memcpy(y.data_ptr<float>(), x.data_ptr<float>(), x.numel() * sizeof(float));
    return y;
}

torch::Tensor zeros_out(torch::Tensor x) {
    auto y = torch::empty_like(x);
    std::memset(y.data_ptr<float>(), 0, x.numel() * sizeof(float));
    return y;
}

torch::Tensor relu_inplace(torch::Tensor x) {
    float* p = x.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) p[i] = p[i] > 0.f ? p[i] : 0.f;
    return x;
}

torch::Tensor spin(torch::Tensor x) {
    volatile int64_t i = 0;
    while (true) { i = i + 1; }
    return x;
}

torch::Tensor crash(torch::Tensor x) {
    volatile float* p = nullptr;
    p[x.numel()] = 1.f;
    return x;
}

torch::Tensor raises(torch::Tensor x) {
    TORCH_CHECK(false, "this kernel does not support these inputs");
    return x;
}

torch::Tensor relu_via_library(torch::Tensor x) {
    auto y = torch::relu(x);  // the library does the work ...
    float* p = y.data_ptr<float>();
    for (int64_t i = 0; i < y.numel(); ++i) p[i] = p[i] * 1.0f;  // ... and a custom loop touches it
    return y;
}

torch::Tensor decoy(torch::Tensor x) {
    auto scratch = torch::empty({4096}, x.options());
    float* p = scratch.data_ptr<float>();
    for (int64_t r = 0; r < 64; ++r)
        for (int64_t i = 0; i < 4096; ++i) p[i] = static_cast<float>(r * i);  // busy, and read by no one
    return scratch;
}

// Row softmax with or without the max subtraction: exp(x) alone is inf / inf = NaN once x passes ~88.7.
static torch::Tensor softmax_rows(torch::Tensor x, bool subtract_max) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    int64_t rows = xc.size(0), cols = xc.numel() / rows;
    for (int64_t r = 0; r < rows; ++r) {
        const float* a = xc.data_ptr<float>() + r * cols;
        float* b = y.data_ptr<float>() + r * cols;
        float m = 0.f;
        if (subtract_max) {
            m = a[0];
            for (int64_t j = 1; j < cols; ++j) m = std::max(m, a[j]);
        }
        float sum = 0.f;
        for (int64_t j = 0; j < cols; ++j) sum += (b[j] = std::exp(a[j] - m));
        for (int64_t j = 0; j < cols; ++j) b[j] /= sum;
    }
    return y;
}
torch::Tensor softmax_stable(torch::Tensor x) { return softmax_rows(x, true); }
torch::Tensor softmax_naive(torch::Tensor x) { return softmax_rows(x, false); }

torch::Tensor gelu_erf(torch::Tensor x) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const float* in = xc.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (int64_t i = 0; i < xc.numel(); ++i) out[i] = 0.5f * in[i] * (1.f + std::erf(in[i] * 0.70710678f));
    return y;
}

// The tanh approximation: up to 1.5e-4 off the erf GELU near |x| = 1.
torch::Tensor gelu_tanh(torch::Tensor x) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const float* in = xc.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (int64_t i = 0; i < xc.numel(); ++i) {
        float v = in[i];
        out[i] = 0.5f * v * (1.f + std::tanh(0.7978845608f * (v + 0.044715f * v * v * v)));
    }
    return y;
}

torch::Tensor matmul(torch::Tensor a, torch::Tensor b) {
    auto ac = a.contiguous(), bc = b.contiguous();
    int64_t n = ac.size(0), k = ac.size(1), m = bc.size(1);
    auto c = torch::zeros({n, m}, ac.options());
    const float* A = ac.data_ptr<float>();
    const float* B = bc.data_ptr<float>();
    float* C = c.data_ptr<float>();
    for (int64_t i = 0; i < n; ++i)
        for (int64_t p = 0; p < k; ++p)
            for (int64_t j = 0; j < m; ++j) C[i * m + j] += A[i * k + p] * B[p * m + j];
    return c;
}
"""

FUNCTIONS = [
    "relu_ok",
    "relu_wrong",
    "copy_only",
    "zeros_out",
    "relu_inplace",
    "spin",
    "crash",
    "raises",
    "relu_via_library",
    "decoy",
    "matmul",
    "softmax_stable",
    "softmax_naive",
    "gelu_erf",
    "gelu_tanh",
]

HEADER = f'''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

ext = load_inline(
    name="kg_cpu_suite",
    cpp_sources=r"""{EXTENSION}""",
    functions={FUNCTIONS!r},
    extra_cflags=["-O2"],
)
'''


def candidate(forward_body: str, extra: str = "", init_body: str = "pass", bases: str = "nn.Module") -> str:
    """A fenced candidate using the shared extension; `forward_body` is the body of forward(self, x)."""
    body = "\n".join("        " + line for line in forward_body.strip().splitlines())
    init = "\n".join("        " + line for line in init_body.strip().splitlines())
    code = (
        f"{HEADER}\n{extra}\n\nclass ModelNew({bases}):\n"
        "    def __init__(self):\n        super().__init__()\n"
        f"{init}\n\n    def forward(self, x):\n{body}\n"
    )
    return f"Here is the optimised model.\n\n```python\n{code}```\n"


CORRECT = candidate("return ext.relu_ok(x)")
WRONG = candidate("return ext.relu_wrong(x)")
HANG = candidate("return ext.spin(x)")
SEGFAULT = candidate("return ext.crash(x)")
PY_ERROR = candidate("return ext.relu_ok(x, x, x)")
# Fails in the constructor, inside the sandbox: the real error must reach the verdict.
BAD_INIT = candidate("return ext.relu_ok(x)", init_body="self.scale = undefined_scale_name")
IDENTITY = candidate("return ext.copy_only(x)")  # right on [0, 1), wrong on signed inputs
ZEROS = candidate("return ext.zeros_out(x)")  # passes KernelBench's atol on tiny outputs
MUTATES = candidate("return ext.relu_inplace(x)")
POINTER_CACHE = candidate(
    "hit = self.cache.get(x._cdata)\nif hit is not None:\n    return hit[1]\nout = ext.relu_ok(x)\n"
    "self.cache[x._cdata] = (x, out)\nreturn out",
    init_body="self.cache = {}",
)
TORCH_OPS = candidate("return torch.relu(x)")
INHERITS = candidate(
    "return ext.relu_ok(x)",
    extra="class Model(nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n",
    bases="Model",
)
FALLBACK = candidate("try:\n    return ext.raises(x)\nexcept RuntimeError:\n    return torch.relu(x)")
SIDE_STREAM = candidate(
    "s = torch.cuda.Stream() if torch.cuda.is_available() else None\nwith torch.cuda.stream(s):\n"
    "    return ext.relu_ok(x)"
)
THREADS = candidate(
    "box = []\nt = threading.Thread(target=lambda: box.append(ext.relu_ok(x)))\n"
    "t.start()\nt.join()\nreturn box[0]",
    extra="import threading",
)
SUBPROCESS = candidate("subprocess.run(['true'])\nreturn ext.relu_ok(x)", extra="import subprocess")
FILE_WRITE = candidate("open('/tmp/kg_leak.txt', 'w').write('x')\nreturn ext.relu_ok(x)")
NETWORK = candidate(
    "socket.create_connection(('example.com', 80))\nreturn ext.relu_ok(x)", extra="import socket"
)
OS_SYSTEM = candidate("os.system('true')\nreturn ext.relu_ok(x)", extra="import os")
INTROSPECTION = candidate("return ext.relu_ok(x).__class__.__subclasses__()", extra="")
SEED_TAMPER = candidate("torch.manual_seed(0)\nreturn ext.relu_ok(x)")
# Reaches a file write the static checks do not name; the runtime sandbox must refuse it.
SNEAKY_WRITE = candidate("x.numpy().tofile('/tmp/kg_sneaky.bin')\nreturn ext.relu_ok(x)")
# Pass KernelBench's check and launch custom code with a real share of the time, but do no custom work.
LIBRARY_IN_WRAPPER = candidate("return ext.relu_via_library(x)")
DECOY = candidate("ext.decoy(x)\nreturn torch.relu(x)")
# Strict numerics (evaluator.numerics): tests/evaluator/problems/softmax.py and gelu_erf.py.
SOFTMAX_NAIVE = candidate("return ext.softmax_naive(x)")  # NaN on the extreme trial
SOFTMAX_STABLE = candidate("return ext.softmax_stable(x)")
GELU_TANH = candidate("return ext.gelu_tanh(x)")  # beyond the erf GELU's numerics, whatever the seed
GELU_ERF = candidate("return ext.gelu_erf(x)")
MATMUL = candidate("return ext.matmul(x, y)").replace("def forward(self, x):", "def forward(self, x, y):")

COMPILE_ERROR = """```python
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

ext = load_inline(
    name="kg_cpu_broken",
    cpp_sources="torch::Tensor f(torch::Tensor x) { return x + undefined_symbol_here; }",
    functions=["f"],
)


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.f(x)
```"""

NO_CODE = "I would write a CUDA kernel for this, but here is only an explanation without any code."

# Two extensions, one at module level and one built in __init__ from local constants: the build phase
# must compile both (concurrently), so the run phase compiles nothing.
TWO_EXTENSIONS = """```python
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC_A = r'''torch::Tensor relu2(torch::Tensor x) {
    auto y = torch::empty_like(x);
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = in[i] > 0.f ? 2.f * in[i] : 0.f;
    return y;
}'''
a = load_inline(name="kg_two_a", cpp_sources=SRC_A, functions=["relu2"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        src = "torch::Tensor half(torch::Tensor x) { return x * 0.5; }"
        self.b = load_inline(name="kg_two_b", cpp_sources=src, functions=["half"])

    def forward(self, x):
        return self.b.half(a.relu2(x))
```"""
