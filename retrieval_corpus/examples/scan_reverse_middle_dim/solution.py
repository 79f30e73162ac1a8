"""Suffix sum along a middle axis: one thread per (batch, feature) column, serial walk backwards."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>

// The scanned axis T is not the innermost one, so consecutive threads take consecutive features f:
// every step of the serial loop is one coalesced row of F floats. Walking t from T-1 down to 0
// produces the suffix sum directly, with no flips. Unrolling lets loads run ahead of the add chain.
__global__ void suffix_sum_kernel(const float* __restrict__ x, float* __restrict__ out,
                                  int B, int T, int F) {
    const int f = blockIdx.x * blockDim.x + threadIdx.x;
    const int b = blockIdx.y;
    if (f >= F) return;
    const int64_t base = (int64_t)b * T * F + f;
    float acc = 0.f;
#pragma unroll 8
    for (int t = T - 1; t >= 0; --t) {
        acc += x[base + (int64_t)t * F];
        out[base + (int64_t)t * F] = acc;
    }
}

torch::Tensor suffix_sum(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.dim() == 3, "x must be (batch, time, features)");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    TORCH_CHECK(x.is_contiguous(), "x must be contiguous");
    const int B = x.size(0), T = x.size(1), F = x.size(2);
    TORCH_CHECK(B <= 65535, "batch too large for gridDim.y");
    auto out = torch::empty_like(x);
    if (out.numel() == 0) return out;
    const int threads = 128;
    const dim3 grid((F + threads - 1) / threads, B);
    suffix_sum_kernel<<<grid, threads, 0, c10::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), out.data_ptr<float>(), B, T, F);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

CPP_SRC = "torch::Tensor suffix_sum(torch::Tensor x);"

_ext = load_inline(
    name="kg_scan_reverse_middle_dim",
    cpp_sources=CPP_SRC,
    cuda_sources=CUDA_SRC,
    functions=["suffix_sum"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    """flip -> cumsum -> flip along dim 1 replaced by one backwards scan kernel."""

    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.suffix_sum(x)
