"""RMSNorm in one kernel (eager: pow, mean, add, rsqrt, two multiplies): block per row, float4 sweeps."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>

constexpr int THREADS = 256;

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__launch_bounds__(THREADS) __global__ void rmsnorm_kernel(
        const float* __restrict__ x, const float* __restrict__ weight, float* __restrict__ out, int cols,
                float eps) {
    __shared__ float shm[THREADS / 32];
    __shared__ float row_scale;
    const int64_t row = blockIdx.x;
    const float4* xr = reinterpret_cast<const float4*>(x + row * cols);
    float4* yr = reinterpret_cast<float4*>(out + row * cols);
    const float4* w4 = reinterpret_cast<const float4*>(weight);
    const int n4 = cols / 4;

    float sq = 0.0f;
    for (int j = threadIdx.x; j < n4; j += THREADS) {
        const float4 v = xr[j];
        sq += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
    }
    sq = warp_sum(sq);
    if (threadIdx.x % 32 == 0) shm[threadIdx.x / 32] = sq;
    __syncthreads();
    if (threadIdx.x == 0) {
        float total = 0.0f;
        for (int w = 0; w < THREADS / 32; ++w) total += shm[w];
        row_scale = rsqrtf(total / cols + eps);
    }
    __syncthreads();
    const float s = row_scale;
    // Second sweep: the 16 KB row was just read by this block, so it comes back from L1/L2, not HBM.
    for (int j = threadIdx.x; j < n4; j += THREADS) {
        const float4 v = xr[j], w = w4[j];
        yr[j] = make_float4(v.x * s * w.x, v.y * s * w.y, v.z * s * w.z, v.w * s * w.w);
    }
}

torch::Tensor rmsnorm_forward(torch::Tensor x, torch::Tensor weight, double eps) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "float32 CUDA tensor expected");
    const int64_t cols = x.size(-1);
    TORCH_CHECK(cols % 4 == 0, "hidden size must be a multiple of 4 for the float4 path");
    TORCH_CHECK(weight.numel() == cols, "weight must match the hidden size");
    auto xc = x.contiguous();
    auto wc = weight.contiguous();
    TORCH_CHECK(reinterpret_cast<uintptr_t>(xc.data_ptr<float>()) % 16 == 0,
            "float4 path needs 16-byte alignment");
    auto out = torch::empty_like(xc);
    const int64_t rows = xc.numel() / cols;
    if (rows == 0) return out;
    rmsnorm_kernel<<<rows, THREADS, 0, c10::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), wc.data_ptr<float>(), out.data_ptr<float>(), (int)cols, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_source = "torch::Tensor rmsnorm_forward(torch::Tensor x, torch::Tensor weight, double eps);"

_ext = load_inline(
    name="kg_normalization_rmsnorm_block_float4",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["rmsnorm_forward"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, hidden: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.rand(hidden) + 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.rmsnorm_forward(x, self.weight, self.eps)
