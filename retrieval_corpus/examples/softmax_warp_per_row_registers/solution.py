"""Short-row softmax: one warp per row, the row cached in registers, so global memory is read once."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>

constexpr int MAX_PER_LANE = 32;   // rows up to 32 * 32 = 1024 elements stay in registers

__device__ __forceinline__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__global__ void softmax_warp_kernel(const float* __restrict__ x, float* __restrict__ out, int64_t rows,
        int cols) {
    const int64_t row = (int64_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= rows) return;
    const float* xr = x + row * cols;
    float* yr = out + row * cols;
    float v[MAX_PER_LANE];
    float m = -INFINITY;
    #pragma unroll
    for (int k = 0; k < MAX_PER_LANE; ++k) {
        const int j = lane + 32 * k;
        v[k] = (j < cols) ? xr[j] : -INFINITY;   // fully unrolled: v stays in registers
        m = fmaxf(m, v[k]);
    }
    m = warp_max(m);
    float s = 0.0f;
    #pragma unroll
    for (int k = 0; k < MAX_PER_LANE; ++k) {
        const int j = lane + 32 * k;
        v[k] = (j < cols) ? expf(v[k] - m) : 0.0f;   // subtract the row max: no overflow
        s += v[k];
    }
    s = warp_sum(s);
    const float inv = 1.0f / s;
    #pragma unroll
    for (int k = 0; k < MAX_PER_LANE; ++k) {
        const int j = lane + 32 * k;
        if (j < cols) yr[j] = v[k] * inv;
    }
}

torch::Tensor softmax_lastdim(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "float32 CUDA tensor expected");
    TORCH_CHECK(x.dim() >= 1 && x.size(-1) > 0 && x.size(-1) <= 32 * MAX_PER_LANE,
            "last dim must be 1..1024");
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    const int cols = (int)xc.size(-1);
    const int64_t rows = xc.numel() / cols;
    if (rows == 0) return out;
    const int threads = 128;   // 4 rows per block
    const int64_t blocks = (rows + 3) / 4;
    softmax_warp_kernel<<<blocks, threads, 0, c10::cuda::getCurrentCUDAStream()>>>(xc.data_ptr<float>(),
            out.data_ptr<float>(), rows, cols);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_source = "torch::Tensor softmax_lastdim(torch::Tensor x);"

_ext = load_inline(
    name="kg_softmax_warp_per_row_registers",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["softmax_lastdim"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.softmax_lastdim(x)
