"""Row max for long rows: a block per row, float4 loads, warp shuffles, then shared memory across warps."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>

__device__ __forceinline__ float warp_max(float v) {
    for (int offset = 16; offset > 0; offset >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
    return v;   // every lane holds the max (butterfly)
}

// Block-wide max: reduce in each warp, park one value per warp in shared memory, reduce those in warp 0.
__device__ float block_max(float v) {
    __shared__ float partial[32];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_max(v);
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    const int nwarps = (blockDim.x + 31) / 32;
    v = (threadIdx.x < nwarps) ? partial[threadIdx.x] : -INFINITY;
    if (warp == 0) v = warp_max(v);
    return v;   // valid in warp 0
}

__global__ void row_max_kernel(const float* __restrict__ x, float* __restrict__ out, int64_t cols,
        bool vec4) {
    const float* xr = x + (int64_t)blockIdx.x * cols;
    float m = -INFINITY;
    if (vec4) {
        const float4* xr4 = reinterpret_cast<const float4*>(xr);
        for (int64_t j = threadIdx.x; j < cols / 4; j += blockDim.x) {
            float4 v = xr4[j];
            m = fmaxf(m, fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w)));
        }
    } else {
        for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) m = fmaxf(m, xr[j]);
    }
    m = block_max(m);
    if (threadIdx.x == 0) out[blockIdx.x] = m;
}

torch::Tensor row_max(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 2 && x.scalar_type() == torch::kFloat32, "x: float32 CUDA 2-D");
    auto xc = x.contiguous();
    const int64_t rows = xc.size(0), cols = xc.size(1);
    TORCH_CHECK(cols > 0, "amax over an empty dimension");
    auto out = torch::empty({rows}, xc.options());
    if (rows == 0) return out;
    // Every row start is 16-byte aligned when the base is and cols is a multiple of 4.
    const bool vec4 = cols % 4 == 0 && reinterpret_cast<uintptr_t>(xc.data_ptr<float>()) % 16 == 0;
    row_max_kernel<<<rows, 512, 0, c10::cuda::getCurrentCUDAStream()>>>(xc.data_ptr<float>(),
            out.data_ptr<float>(), cols, vec4);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_source = "torch::Tensor row_max(torch::Tensor x);"

_ext = load_inline(
    name="kg_reduction_block_row_max_long_rows",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["row_max"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.row_max(x)
