"""LayerNorm, one block per row: the row sits in registers (float4), two-pass mean/variance, fused affine."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>

constexpr int THREADS = 256;
constexpr int MAX_VEC = 4;   // float4 per thread: rows up to 256 * 4 * 4 = 4096 floats

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// Sum over the block, returned to every thread; the trailing barrier lets the caller reuse shm at once.
__device__ float block_allreduce_sum(float v, float* shm) {
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_sum(v);
    if (lane == 0) shm[warp] = v;
    __syncthreads();
    float total = 0.0f;
    for (int w = 0; w < THREADS / 32; ++w) total += shm[w];
    __syncthreads();
    return total;
}

__launch_bounds__(THREADS) __global__ void layernorm_kernel(
        const float* __restrict__ x, const float* __restrict__ gamma, const float* __restrict__ beta,
        float* __restrict__ out, int cols, float eps) {
    __shared__ float shm[32];
    const int64_t row = blockIdx.x;
    const float4* xr = reinterpret_cast<const float4*>(x + row * cols);
    float4* yr = reinterpret_cast<float4*>(out + row * cols);
    const float4* g4 = reinterpret_cast<const float4*>(gamma);
    const float4* b4 = reinterpret_cast<const float4*>(beta);
    const int n4 = cols / 4;

    float4 v[MAX_VEC];
    float sum = 0.0f;
    #pragma unroll
    for (int k = 0; k < MAX_VEC; ++k) {
        const int j = threadIdx.x + k * THREADS;
        v[k] = (j < n4) ? xr[j] : make_float4(0.f, 0.f, 0.f, 0.f);
        sum += v[k].x + v[k].y + v[k].z + v[k].w;
    }
    const float mean = block_allreduce_sum(sum, shm) / cols;

    // Second pass over registers: sum of squared deviations (no E[x^2] - E[x]^2 cancellation).
    float sq = 0.0f;
    #pragma unroll
    for (int k = 0; k < MAX_VEC; ++k) {
        const int j = threadIdx.x + k * THREADS;
        if (j < n4) {
            const float dx = v[k].x - mean, dy = v[k].y - mean, dz = v[k].z - mean, dw = v[k].w - mean;
            sq += dx * dx + dy * dy + dz * dz + dw * dw;
        }
    }
    const float rstd = rsqrtf(block_allreduce_sum(sq, shm) / cols + eps);   // biased variance, as LayerNorm

    #pragma unroll
    for (int k = 0; k < MAX_VEC; ++k) {
        const int j = threadIdx.x + k * THREADS;
        if (j < n4) {
            const float4 g = g4[j], b = b4[j];
            float4 r;
            r.x = (v[k].x - mean) * rstd * g.x + b.x;
            r.y = (v[k].y - mean) * rstd * g.y + b.y;
            r.z = (v[k].z - mean) * rstd * g.z + b.z;
            r.w = (v[k].w - mean) * rstd * g.w + b.w;
            yr[j] = r;
        }
    }
}

torch::Tensor layernorm_forward(torch::Tensor x, torch::Tensor gamma, torch::Tensor beta, double eps) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "float32 CUDA tensor expected");
    const int64_t cols = x.size(-1);
    TORCH_CHECK(cols % 4 == 0 && cols <= 4 * THREADS * MAX_VEC,
            "hidden size must be a multiple of 4, at most 4096");
    TORCH_CHECK(gamma.numel() == cols && beta.numel() == cols,
            "affine parameters must match the hidden size");
    auto xc = x.contiguous();
    auto gc = gamma.contiguous();
    auto bc = beta.contiguous();
    TORCH_CHECK(reinterpret_cast<uintptr_t>(xc.data_ptr<float>()) % 16 == 0,
            "float4 path needs 16-byte alignment");
    auto out = torch::empty_like(xc);
    const int64_t rows = xc.numel() / cols;
    if (rows == 0) return out;
    layernorm_kernel<<<rows, THREADS, 0, c10::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), gc.data_ptr<float>(), bc.data_ptr<float>(), out.data_ptr<float>(), (int)cols,
                (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_source = (
    "torch::Tensor layernorm_forward(torch::Tensor x, torch::Tensor gamma, torch::Tensor beta, double eps);"
)

_ext = load_inline(
    name="kg_normalization_layernorm_rows_registers",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["layernorm_forward"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        # The nn.LayerNorm only holds weight and bias (same seeded init as the reference); it is never called.
        self.norm = nn.LayerNorm(hidden, eps=1e-5)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.layernorm_forward(x, self.norm.weight, self.norm.bias, self.norm.eps)
