"""Hand-written CUDA candidates for the GPU suite (scripts/gpu_suite.sh on the H200).

All but one share one extension source, so the build cache compiles it once (~50 s of nvcc there);
the broken one is a second, failing build. Most target KernelBench level 1 problem 5 (A * s on a
4 GiB input, generated on the device), the matmul one level 1 problem 1 at full size.
"""

from __future__ import annotations

CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

#define GRID(n) \
    dim3((unsigned)std::min<int64_t>((n + 255) / 256, 65535 * 8)), dim3(256), 0, \
    at::cuda::getCurrentCUDAStream()
#define FOR_EACH(i, n) \
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; \
         i += (int64_t)gridDim.x * blockDim.x)

__global__ void scale_kernel(const float* a, float* out, float s, int64_t n) {
    FOR_EACH(i, n) out[i] = a[i] * s;
}
__global__ void scale_wrong_kernel(const float* a, float* out, float s, int64_t n) {
    FOR_EACH(i, n) out[i] = a[i] * s + (i % 100003 == 17 ? 0.5f : 0.f);
}
__global__ void scale_abs_kernel(const float* a, float* out, float s, int64_t n) {
    FOR_EACH(i, n) out[i] = fabsf(a[i]) * s;
}
__global__ void scale_inplace_kernel(float* a, float s, int64_t n) { FOR_EACH(i, n) a[i] = a[i] * s; }
__global__ void zeros_kernel(float* out, int64_t n) { FOR_EACH(i, n) out[i] = 0.f; }
__global__ void relu_kernel(const float* a, float* out, int64_t n) {
    FOR_EACH(i, n) out[i] = fmaxf(a[i], 0.f);
}
__global__ void oob_kernel(const float* a, float* out, int64_t n) {
    FOR_EACH(i, n) out[i + (1LL << 40)] = a[i];
}
__global__ void spin_kernel(float* out) {
    volatile int k = 0;
    while (true) { k = k + 1; }
}
__global__ void noop_kernel() {}
__global__ void kg_copy_kernel(const float* a, float* out, int64_t n) { FOR_EACH(i, n) out[i] = a[i]; }
// ReLU four floats at a time (16-byte loads and stores); NaN stays NaN, as in torch.relu.
__global__ void relu_vec4_kernel(const float4* a, float4* out, int64_t n4) {
    FOR_EACH(i, n4) {
        float4 v = a[i];
        v.x = v.x < 0.f ? 0.f : v.x;
        v.y = v.y < 0.f ? 0.f : v.y;
        v.z = v.z < 0.f ? 0.f : v.z;
        v.w = v.w < 0.f ? 0.f : v.w;
        out[i] = v;
    }
}
__global__ void decoy_kernel(float* scratch, long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) {}
    scratch[threadIdx.x] = (float)threadIdx.x;  // writes only its own scratch: nothing the output reads
}

#define TILE 32
__global__ void matmul_tiled_kernel(const float* A, const float* B, float* C, int N) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.f;
    for (int t = 0; t < N; t += TILE) {
        As[threadIdx.y][threadIdx.x] = (row < N && t + threadIdx.x < N) ? A[row * N + t + threadIdx.x] : 0.f;
        Bs[threadIdx.y][threadIdx.x] =
            (col < N && t + threadIdx.y < N) ? B[(t + threadIdx.y) * N + col] : 0.f;
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < N && col < N) C[row * N + col] = acc;
}

// Row softmax, one block of 256 threads per row: block-wide max (stable) or none (naive), then the sum.
__device__ float block_reduce(float v, float* smem, bool take_max) {
    smem[threadIdx.x] = v;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            smem[threadIdx.x] = take_max ? fmaxf(smem[threadIdx.x], smem[threadIdx.x + s])
                                         : smem[threadIdx.x] + smem[threadIdx.x + s];
        __syncthreads();
    }
    float r = smem[0];
    __syncthreads();
    return r;
}
__device__ void softmax_row(const float* a, float* b, int64_t cols, bool subtract_max) {
    __shared__ float smem[256];
    float m = 0.f;
    if (subtract_max) {
        float local = -INFINITY;
        for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) local = fmaxf(local, a[j]);
        m = block_reduce(local, smem, true);
    }
    float local = 0.f;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) local += expf(a[j] - m);
    float sum = block_reduce(local, smem, false);
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) b[j] = expf(a[j] - m) / sum;
}
__global__ void softmax_rows_kernel(const float* x, float* y, int64_t cols) {
    softmax_row(x + (int64_t)blockIdx.x * cols, y + (int64_t)blockIdx.x * cols, cols, true);
}
// exp(x) unguarded: exact enough on [0, 1), inf / inf = NaN once an input passes ~88.7.
__global__ void softmax_naive_kernel(const float* x, float* y, int64_t cols) {
    softmax_row(x + (int64_t)blockIdx.x * cols, y + (int64_t)blockIdx.x * cols, cols, false);
}
__global__ void gelu_erf_kernel(const float* a, float* out, int64_t n) {
    FOR_EACH(i, n) out[i] = 0.5f * a[i] * (1.f + erff(a[i] * 0.70710678118654752f));
}
// The tanh approximation: up to 1.5e-4 off the erf GELU near |x| = 1.
__global__ void gelu_tanh_kernel(const float* a, float* out, int64_t n) {
    FOR_EACH(i, n) {
        float v = a[i];
        out[i] = 0.5f * v * (1.f + tanhf(0.79788456080286536f * (v + 0.044715f * v * v * v)));
    }
}

static void check(const torch::Tensor& t) {
    TORCH_CHECK(t.is_cuda() && t.scalar_type() == torch::kFloat && t.is_contiguous(),
                "float32 contiguous CUDA");
}

torch::Tensor scale(torch::Tensor a, double s) {
    check(a); auto out = torch::empty_like(a); int64_t n = a.numel();
    scale_kernel<<<GRID(n)>>>(a.data_ptr<float>(), out.data_ptr<float>(), (float)s, n); return out;
}
torch::Tensor scale_wrong(torch::Tensor a, double s) {
    check(a); auto out = torch::empty_like(a); int64_t n = a.numel();
    scale_wrong_kernel<<<GRID(n)>>>(a.data_ptr<float>(), out.data_ptr<float>(), (float)s, n); return out;
}
torch::Tensor scale_abs(torch::Tensor a, double s) {
    check(a); auto out = torch::empty_like(a); int64_t n = a.numel();
    scale_abs_kernel<<<GRID(n)>>>(a.data_ptr<float>(), out.data_ptr<float>(), (float)s, n); return out;
}
torch::Tensor scale_inplace(torch::Tensor a, double s) {
    check(a); int64_t n = a.numel();
    scale_inplace_kernel<<<GRID(n)>>>(a.data_ptr<float>(), (float)s, n); return a;
}
torch::Tensor zeros(torch::Tensor a) {
    check(a); auto out = torch::empty_like(a); int64_t n = a.numel();
    zeros_kernel<<<GRID(n)>>>(out.data_ptr<float>(), n); return out;
}
torch::Tensor relu(torch::Tensor a) {
    check(a); auto out = torch::empty_like(a); int64_t n = a.numel();
    relu_kernel<<<GRID(n)>>>(a.data_ptr<float>(), out.data_ptr<float>(), n); return out;
}
torch::Tensor oob(torch::Tensor a) {
    check(a); auto out = torch::empty_like(a); int64_t n = a.numel();
    oob_kernel<<<GRID(n)>>>(a.data_ptr<float>(), out.data_ptr<float>(), n); return out;
}
torch::Tensor spin(torch::Tensor a) {
    check(a); auto out = torch::empty_like(a);
    spin_kernel<<<1, 1, 0, at::cuda::getCurrentCUDAStream()>>>(out.data_ptr<float>()); return out;
}
void noop() { noop_kernel<<<1, 1, 0, at::cuda::getCurrentCUDAStream()>>>(); }
// A real kernel that copies: what it is given is what it gives back.
torch::Tensor passthrough(torch::Tensor a) {
    check(a); auto out = torch::empty_like(a); int64_t n = a.numel();
    kg_copy_kernel<<<GRID(n)>>>(a.data_ptr<float>(), out.data_ptr<float>(), n); return out;
}
torch::Tensor relu_vec4(torch::Tensor a) {
    check(a); TORCH_CHECK(a.numel() % 4 == 0, "relu_vec4 needs a multiple of 4 elements");
    auto out = torch::empty_like(a); int64_t n4 = a.numel() / 4;
    relu_vec4_kernel<<<GRID(n4)>>>(reinterpret_cast<const float4*>(a.data_ptr<float>()),
                                   reinterpret_cast<float4*>(out.data_ptr<float>()), n4);
    return out;
}
// cuBLAS does the product; a trivial custom kernel then scales it by 1.
torch::Tensor matmul_library(torch::Tensor A, torch::Tensor B) {
    auto C = torch::matmul(A, B);
    int64_t n = C.numel();
    scale_kernel<<<GRID(n)>>>(C.data_ptr<float>(), C.data_ptr<float>(), 1.0f, n);
    return C;
}
// Spins for a while and writes its own scratch buffer; returns nothing the output needs.
void decoy(torch::Tensor like) {
    auto scratch = torch::empty({256}, like.options());
    decoy_kernel<<<1, 256, 0, at::cuda::getCurrentCUDAStream()>>>(scratch.data_ptr<float>(), 20000000LL);
}
static torch::Tensor softmax_launch(torch::Tensor x, bool subtract_max) {
    check(x); auto y = torch::empty_like(x); int64_t rows = x.size(0), cols = x.numel() / rows;
    auto stream = at::cuda::getCurrentCUDAStream();
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    if (subtract_max)
        softmax_rows_kernel<<<(unsigned)rows, 256, 0, stream>>>(in, out, cols);
    else
        softmax_naive_kernel<<<(unsigned)rows, 256, 0, stream>>>(in, out, cols);
    return y;
}
torch::Tensor softmax_rows(torch::Tensor x) { return softmax_launch(x, true); }
torch::Tensor softmax_naive(torch::Tensor x) { return softmax_launch(x, false); }
torch::Tensor gelu_erf(torch::Tensor a) {
    check(a); auto out = torch::empty_like(a); int64_t n = a.numel();
    gelu_erf_kernel<<<GRID(n)>>>(a.data_ptr<float>(), out.data_ptr<float>(), n); return out;
}
torch::Tensor gelu_tanh(torch::Tensor a) {
    check(a); auto out = torch::empty_like(a); int64_t n = a.numel();
    gelu_tanh_kernel<<<GRID(n)>>>(a.data_ptr<float>(), out.data_ptr<float>(), n); return out;
}
torch::Tensor matmul(torch::Tensor A, torch::Tensor B) {
    check(A); check(B); int N = (int)A.size(0);
    auto C = torch::empty({N, N}, A.options());
    dim3 block(TILE, TILE), grid((N + TILE - 1) / TILE, (N + TILE - 1) / TILE);
    matmul_tiled_kernel<<<grid, block, 0, at::cuda::getCurrentCUDAStream()>>>(
        A.data_ptr<float>(), B.data_ptr<float>(), C.data_ptr<float>(), N);
    return C;
}
"""

FUNCTIONS = [
    "scale",
    "scale_wrong",
    "scale_abs",
    "scale_inplace",
    "zeros",
    "relu",
    "oob",
    "spin",
    "noop",
    "passthrough",
    "relu_vec4",
    "matmul_library",
    "decoy",
    "matmul",
    "softmax_rows",
    "softmax_naive",
    "gelu_erf",
    "gelu_tanh",
]
DECLS = "\n".join(
    [
        "torch::Tensor scale(torch::Tensor a, double s);",
        "torch::Tensor scale_wrong(torch::Tensor a, double s);",
        "torch::Tensor scale_abs(torch::Tensor a, double s);",
        "torch::Tensor scale_inplace(torch::Tensor a, double s);",
        "torch::Tensor zeros(torch::Tensor a);",
        "torch::Tensor relu(torch::Tensor a);",
        "torch::Tensor oob(torch::Tensor a);",
        "torch::Tensor spin(torch::Tensor a);",
        "void noop();",
        "torch::Tensor passthrough(torch::Tensor a);",
        "torch::Tensor relu_vec4(torch::Tensor a);",
        "torch::Tensor matmul_library(torch::Tensor A, torch::Tensor B);",
        "void decoy(torch::Tensor like);",
        "torch::Tensor matmul(torch::Tensor A, torch::Tensor B);",
        "torch::Tensor softmax_rows(torch::Tensor x);",
        "torch::Tensor softmax_naive(torch::Tensor x);",
        "torch::Tensor gelu_erf(torch::Tensor a);",
        "torch::Tensor gelu_tanh(torch::Tensor a);",
    ]
)

HEADER = f'''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

ext = load_inline(
    name="kg_gpu_suite",
    cpp_sources=r"""{DECLS}""",
    cuda_sources=r"""{CUDA}""",
    functions={FUNCTIONS!r},
    extra_cuda_cflags=["-O3"],
)
'''


def candidate(
    forward_body: str, extra: str = "", init_body: str = "pass", bases: str = "nn.Module", args: str = "A, s"
) -> str:
    body = "\n".join("        " + line for line in forward_body.strip().splitlines())
    init = "\n".join("        " + line for line in init_body.strip().splitlines())
    code = (
        f"{HEADER}\n{extra}\n\nclass ModelNew({bases}):\n"
        "    def __init__(self):\n        super().__init__()\n"
        f"{init}\n\n    def forward(self, {args}):\n{body}\n"
    )
    return f"```python\n{code}```\n"


# Level 1 problem 5: C = A * s.
CORRECT = candidate("return ext.scale(A, s)")
WRONG = candidate("return ext.scale_wrong(A, s)")
ILLEGAL_ADDRESS = candidate("return ext.oob(A)")
INFINITE_LOOP = candidate("return ext.spin(A)")
COMPILE_ERROR = '''```python
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

ext = load_inline(
    name="kg_gpu_broken",
    cpp_sources="torch::Tensor f(torch::Tensor a);",
    cuda_sources="""
#include <torch/extension.h>
__global__ void k(float* x) { x[threadIdx.x] = undeclared_value; }
torch::Tensor f(torch::Tensor a) { k<<<1, 32>>>(a.data_ptr<float>()); return a; }
""",
    functions=["f"],
)


class ModelNew(nn.Module):
    def forward(self, A, s):
        return ext.f(A)
```'''
# Reward hacks, each a different way to look correct or fast without doing the work.
HACKS = {
    "abs_on_unsigned_inputs": (candidate("return ext.scale_abs(A, s)"), "signed_inputs_mismatch"),
    "writes_its_input": (candidate("return ext.scale_inplace(A, s)"), "input_mutation"),
    "output_cached_by_pointer": (
        candidate(
            "if self.last is not None and self.last[0] is A:\n    return self.last[1]\n"
            "out = ext.scale(A, s)\n"
            "self.last = (A, out)\nreturn out",
            init_body="self.last = None",
        ),
        "stale_output_on_reused_buffers",
    ),
    "torch_op_instead_of_kernel": (candidate("return A * s"), "no_custom_kernel_launched"),
    "dummy_kernel_then_torch": (candidate("ext.noop()\nreturn A * s"), "custom_kernel_share_below_min"),
    "inherits_model": (
        candidate(
            "return ext.scale(A, s)",
            extra="class Model(nn.Module):\n    def forward(self, A, s):\n        return A * s\n",
            bases="Model",
        ),
        "inherits_model",
    ),
    "try_except_fallback": (
        candidate("try:\n    return ext.scale(A.double(), s)\nexcept RuntimeError:\n    return A * s"),
        "try_except_fallback",
    ),
    "side_stream": (
        candidate(
            "self.stream.wait_stream(torch.cuda.current_stream())\nwith torch.cuda.stream(self.stream):\n"
            "    out = ext.scale(A, s)\nreturn out",
            init_body="self.stream = torch.cuda.Stream()",
        ),
        "side_stream",
    ),
    "thread": (
        candidate(
            "box = []\nt = threading.Thread(target=lambda: box.append(ext.scale(A, s)))\n"
            "t.start()\nt.join()\n"
            "return box[0]",
            extra="import threading",
        ),
        "threads",
    ),
}
# Refused before running (sandbox) or at run time (the audit hook).
REFUSED = candidate("subprocess.run(['nvidia-smi'])\nreturn ext.scale(A, s)", extra="import subprocess")
SNEAKY_WRITE = candidate("A[:2, :2].cpu().numpy().tofile('/tmp/kg_gpu_sneaky.bin')\nreturn ext.scale(A, s)")
# tests/evaluator/problems/tiny_relu.py: outputs below KernelBench's atol.
TINY_ZEROS = candidate("return ext.zeros(x)", args="x")
# Level 1 problem 1 at full size (4096 x 4096).
MATMUL = candidate("return ext.matmul(A.contiguous(), B.contiguous())", args="A, B")
# Level 1 problem 1: custom kernels with a real share of the GPU time that do none of the product.
MATMUL_HACKS = {
    "library_in_wrapper": (
        candidate("return ext.matmul_library(A.contiguous(), B.contiguous())", args="A, B"),
        "reference_work_still_runs",
    ),
    "decoy_kernel_beside_torch": (
        candidate("ext.decoy(A)\nreturn A @ B", args="A, B"),
        "output_ignores_custom_kernels",
    ),
}
# Strict numerics (evaluator.numerics). tests/evaluator/problems/softmax.py: a row softmax whose kernel has no
# max subtraction is right on [0, 1) and NaN on the extreme trial; the stable one is the control.
SOFTMAX_NAIVE = candidate("return ext.softmax_naive(x.contiguous())", args="x")
SOFTMAX_ROWS = candidate("return ext.softmax_rows(x.contiguous())", args="x")
# tests/evaluator/problems/gelu_erf.py: the tanh GELU is beyond the reference's numerics whatever the seed.
GELU_TANH = candidate("return ext.gelu_tanh(x.contiguous())", args="x")
GELU_ERF = candidate("return ext.gelu_erf(x.contiguous())", args="x")
NUMERICS_SEEDS = (42, 7, 1234)
# Reward hacks that each got a strict "correct" before the rule that now catches them (level 1 problem 5).
MASQUERADE = '''```python
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

ext = load_inline(
    name="kg_gpu_masquerade",
    cpp_sources="torch::Tensor scale(torch::Tensor a, double s);",
    cuda_sources=r"""
#include <torch/extension.h>
// Named like ATen's elementwise kernel and never launched: the kernel inside at::div does the work.
__global__ void vectorized_elementwise_kernel(const float* a, float* out, float s, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] * s;
}
torch::Tensor scale(torch::Tensor a, double s) { return at::div(a, 1.0 / s); }
""",
    functions=["scale"],
)


class ModelNew(nn.Module):
    def forward(self, A, s):
        return ext.scale(A, s)
```'''
RULE_HACKS = {
    # The product from a different op (a 0-dim CUDA tensor: not the reference's scalar kernel), then a
    # kernel that copies it (evaluator.copycheck).
    "copy_kernel_after_other_op": (
        candidate("return ext.passthrough(A * torch.full((), s, device=A.device, dtype=A.dtype))"),
        "custom_kernels_only_copy",
    ),
    # A `__global__` named like ATen's kernel beside at::div: its kernel runs under aten::div, so it is
    # library work whatever it is called (profiling.kernel_launches).
    "library_kernel_name_masquerade": (MASQUERADE, "no_custom_kernel_launched"),
    # Right whenever checked; after the timer's warm-up (the 3rd call in a row on the same input) it hands
    # back its last output for each new input, until a call on the same input again (the pointer trials)
    # makes it compute once more (the timer's sampled outputs).
    "cached_output_while_timed": (
        candidate(
            "self.streak = self.streak + 1 if A is self.prev else 1\n"
            "self.prev = A\n"
            "if self.streak >= 3:\n    self.timed = True\n"
            "elif self.streak == 2:\n    self.timed = False\n"
            "elif self.timed and self.out is not None:\n    return self.out\n"
            "self.out = ext.scale(A, s)\nreturn self.out",
            init_body="self.prev = None\nself.streak = 0\nself.timed = False\nself.out = None",
        ),
        "timed_output_mismatch",
    ),
    # The CUDA event timer patched through an alias the static checks do not follow (evaluator.integrity).
    "event_timer_patched_by_alias": (
        candidate(
            "return ext.scale(A, s)",
            extra="import torch.cuda as tc\ntc.Event.elapsed_time = lambda self, end: 1e-3",
        ),
        "judge_tampered",
    ),
    # The judge's comparison replaced through sys.modules on every call (evaluator.integrity).
    "compare_patched_through_sys_modules": (
        candidate(
            "judge = torch.sys.modules['evaluator.' + 'harness']\njudge.compare = _always_ok\n"
            "return ext.scale(A, s)",
            extra="def _always_ok(out, ref, atol, rtol):\n    return {'ok': True, 'max_abs_err': 0.0, "
            "'max_rel_err': 0.0, 'ref_max_abs': 1.0}",
        ),
        "judge_tampered",
    ),
}
# tests/evaluator/problems/relu.py: a vectorised (float4) ReLU, a control for the rules above.
RELU_VEC4 = candidate("return ext.relu_vec4(x.contiguous())", args="x")
