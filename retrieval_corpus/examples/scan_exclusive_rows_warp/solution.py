"""Exclusive scan of short rows: one warp per row, float4 loads, shuffle scan, no shared memory."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>

constexpr int WARPS_PER_BLOCK = 8;

// Each warp owns one row and walks it in chunks of 128 elements (32 lanes x one float4).
// Per chunk: exclusive scan inside the float4, warp exclusive scan of the lane totals, plus the
// carry of previous chunks. The warp never synchronises with other warps.
__global__ void exclusive_scan_rows_kernel(const float4* __restrict__ x, float4* __restrict__ out,
                                           int64_t rows, int cols4) {
    const int lane = threadIdx.x & 31;
    const int64_t row = (int64_t)blockIdx.x * WARPS_PER_BLOCK + (threadIdx.x >> 5);
    if (row >= rows) return;                   // whole warp exits together
    const float4* xr = x + row * cols4;
    float4* orow = out + row * cols4;
    float carry = 0.f;
    for (int base = 0; base < cols4; base += 32) {
        const int i = base + lane;
        const float4 a = i < cols4 ? xr[i] : make_float4(0.f, 0.f, 0.f, 0.f);
        const float e1 = a.x, e2 = a.x + a.y, e3 = a.x + a.y + a.z;
        const float lane_total = e3 + a.w;
        float incl = lane_total;
#pragma unroll
        for (int off = 1; off < 32; off <<= 1) {
            const float n = __shfl_up_sync(0xffffffffu, incl, off);
            if (lane >= off) incl += n;
        }
        float excl = __shfl_up_sync(0xffffffffu, incl, 1);
        if (lane == 0) excl = 0.f;
        const float p = carry + excl;
        if (i < cols4) orow[i] = make_float4(p, p + e1, p + e2, p + e3);
        carry += __shfl_sync(0xffffffffu, incl, 31);
    }
}

torch::Tensor exclusive_scan_rows(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.dim() == 2, "x must be 2-D (rows, cols)");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    TORCH_CHECK(x.is_contiguous(), "x must be contiguous");
    TORCH_CHECK(x.size(1) % 4 == 0, "cols must be a multiple of 4 for float4 loads");
    TORCH_CHECK(reinterpret_cast<uintptr_t>(x.data_ptr<float>()) % 16 == 0, "x must be 16-byte aligned");
    auto out = torch::empty_like(x);
    if (out.numel() == 0) return out;
    const int64_t rows = x.size(0);
    const int64_t blocks = (rows + WARPS_PER_BLOCK - 1) / WARPS_PER_BLOCK;
    TORCH_CHECK(blocks <= 2147483647LL, "too many rows");
    const auto stream = c10::cuda::getCurrentCUDAStream();
    exclusive_scan_rows_kernel<<<(unsigned)blocks, WARPS_PER_BLOCK * 32, 0, stream>>>(
        reinterpret_cast<const float4*>(x.data_ptr<float>()),
        reinterpret_cast<float4*>(out.data_ptr<float>()),
        rows, (int)(x.size(1) / 4));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

CPP_SRC = "torch::Tensor exclusive_scan_rows(torch::Tensor x);"

_ext = load_inline(
    name="kg_scan_exclusive_rows_warp",
    cpp_sources=CPP_SRC,
    cuda_sources=CUDA_SRC,
    functions=["exclusive_scan_rows"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    """Exclusive cumsum along dim 1 in one kernel (no zeros + slice + cumsum + cat)."""

    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.exclusive_scan_rows(x)
