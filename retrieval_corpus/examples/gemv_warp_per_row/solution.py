"""Batch-1 linear layer as a GEMV: one warp per output row, float4 loads, shuffle reduction, bias fused."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>

constexpr int WARPS_PER_BLOCK = 8;

// y[r] = dot(W[r, :], x) + b[r]. A warp reads its row of W as float4 (32 lanes x 16 bytes = 512
// contiguous bytes per step), so the kernel streams W at close to memory bandwidth; the partial dot
// products are combined with __shfl_xor_sync and lane 0 adds the bias.
__global__ void gemv_bias_kernel(const float4* __restrict__ W, const float4* __restrict__ x,
                                 const float* __restrict__ bias, float* __restrict__ y, int rows, int k4) {
    const int lane = threadIdx.x & 31;
    const int row = blockIdx.x * WARPS_PER_BLOCK + (threadIdx.x >> 5);
    if (row >= rows) return;
    const float4* wr = W + (int64_t)row * k4;
    float acc = 0.f;
    for (int i = lane; i < k4; i += 32) {
        const float4 w = wr[i];
        const float4 v = x[i];
        acc += w.x * v.x + w.y * v.y + w.z * v.z + w.w * v.w;
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, off);
    if (lane == 0) y[row] = acc + bias[row];
}

torch::Tensor linear_gemv(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
    TORCH_CHECK(x.is_cuda() && weight.is_cuda() && bias.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(x.dim() == 1 && weight.dim() == 2 && bias.dim() == 1, "need x (K), weight (N, K), bias (N)");
    TORCH_CHECK(weight.size(1) == x.size(0) && bias.size(0) == weight.size(0), "shape mismatch");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32 &&
                bias.scalar_type() == torch::kFloat32, "inputs must be float32");
    TORCH_CHECK(x.is_contiguous() && weight.is_contiguous() && bias.is_contiguous(),
                "inputs must be contiguous");
    const int rows = weight.size(0), K = weight.size(1);
    TORCH_CHECK(K % 4 == 0, "in_features must be a multiple of 4 for float4 loads");
    TORCH_CHECK(reinterpret_cast<uintptr_t>(x.data_ptr<float>()) % 16 == 0 &&
                reinterpret_cast<uintptr_t>(weight.data_ptr<float>()) % 16 == 0,
                "x and weight must be 16-byte aligned");
    auto y = torch::empty({rows}, x.options());
    if (rows == 0) return y;
    const int blocks = (rows + WARPS_PER_BLOCK - 1) / WARPS_PER_BLOCK;
    gemv_bias_kernel<<<blocks, WARPS_PER_BLOCK * 32, 0, c10::cuda::getCurrentCUDAStream()>>>(
        reinterpret_cast<const float4*>(weight.data_ptr<float>()),
        reinterpret_cast<const float4*>(x.data_ptr<float>()),
        bias.data_ptr<float>(), y.data_ptr<float>(), rows, K / 4);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

CPP_SRC = "torch::Tensor linear_gemv(torch::Tensor x, torch::Tensor weight, torch::Tensor bias);"

_ext = load_inline(
    name="kg_gemv_warp_per_row",
    cpp_sources=CPP_SRC,
    cuda_sources=CUDA_SRC,
    functions=["linear_gemv"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    """Same parameters as nn.Linear (created the same way, so seeded init matches); custom GEMV forward."""

    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.linear_gemv(x, self.linear.weight, self.linear.bias)
