"""cuBLAS GEMM via torch.matmul (no bias), then one float4 kernel for bias + GELU + residual."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>

// out = gelu(h + bias) + residual, exact (erf) GELU as F.gelu's default. One read of h and residual,
// one write of out: the three elementwise passes of the reference (bias in addmm aside) become one.
__global__ void bias_gelu_residual_kernel(const float4* __restrict__ h, const float4* __restrict__ bias,
                                          const float4* __restrict__ res, float4* __restrict__ out,
                                          int64_t total4, int n4) {
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total4; i += step) {
        const float4 v = h[i];
        const float4 b = bias[i % n4];
        const float4 r = res[i];
        float t[4] = {v.x + b.x, v.y + b.y, v.z + b.z, v.w + b.w};
#pragma unroll
        for (int j = 0; j < 4; ++j) t[j] = t[j] * 0.5f * (1.0f + erff(t[j] * 0.70710678118654752f));
        out[i] = make_float4(t[0] + r.x, t[1] + r.y, t[2] + r.z, t[3] + r.w);
    }
}

torch::Tensor bias_gelu_residual(torch::Tensor h, torch::Tensor bias, torch::Tensor residual) {
    TORCH_CHECK(h.is_cuda() && bias.is_cuda() && residual.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(h.dim() == 2 && bias.dim() == 1 && bias.size(0) == h.size(1), "need h (M, N) and bias (N)");
    TORCH_CHECK(residual.sizes() == h.sizes(), "residual must have the shape of h");
    TORCH_CHECK(h.scalar_type() == torch::kFloat32 && bias.scalar_type() == torch::kFloat32 &&
                residual.scalar_type() == torch::kFloat32, "inputs must be float32");
    TORCH_CHECK(h.is_contiguous() && bias.is_contiguous() && residual.is_contiguous(),
                "inputs must be contiguous");
    const int N = h.size(1);
    TORCH_CHECK(N % 4 == 0, "out_features must be a multiple of 4 for float4 access");
    auto out = torch::empty_like(h);
    const int64_t total4 = h.numel() / 4;
    if (total4 == 0) return out;
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((total4 + threads - 1) / threads, 65535);
    bias_gelu_residual_kernel<<<blocks, threads, 0, c10::cuda::getCurrentCUDAStream()>>>(
        reinterpret_cast<const float4*>(h.data_ptr<float>()),
        reinterpret_cast<const float4*>(bias.data_ptr<float>()),
        reinterpret_cast<const float4*>(residual.data_ptr<float>()),
        reinterpret_cast<float4*>(out.data_ptr<float>()),
        total4, N / 4);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

CPP_SRC = "torch::Tensor bias_gelu_residual(torch::Tensor h, torch::Tensor bias, torch::Tensor residual);"

_ext = load_inline(
    name="kg_fused_linear_gelu_residual",
    cpp_sources=CPP_SRC,
    cuda_sources=CUDA_SRC,
    functions=["bias_gelu_residual"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    """Keeps cuBLAS for the GEMM (torch.matmul on the transposed-view weight) and fuses the tail."""

    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        h = torch.matmul(x, self.linear.weight.t())
        return _ext.bias_gelu_residual(h, self.linear.bias, residual)
