"""alpha*x + beta*y in one pass with 128-bit (float4) loads and stores; eager runs three kernels."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>

// Each thread moves 16 bytes per load: fewer memory instructions for a purely bandwidth-bound op.
__global__ void axpby_vec4_kernel(const float4* __restrict__ x, const float4* __restrict__ y,
                                  float4* __restrict__ out, float a, float b, int64_t n4) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 u = x[i];
        float4 v = y[i];
        float4 r;
        r.x = a * u.x + b * v.x;
        r.y = a * u.y + b * v.y;
        r.z = a * u.z + b * v.z;
        r.w = a * u.w + b * v.w;
        out[i] = r;
    }
}

// The last numel % 4 elements (or everything, when pointers are not 16-byte aligned).
__global__ void axpby_scalar_kernel(const float* __restrict__ x, const float* __restrict__ y,
                                    float* __restrict__ out, float a, float b, int64_t start, int64_t n) {
    int64_t i = start + (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + b * y[i];
}

torch::Tensor axpby(torch::Tensor x, torch::Tensor y, double alpha, double beta) {
    TORCH_CHECK(x.is_cuda() && y.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && y.scalar_type() == torch::kFloat32, "float32 only");
    TORCH_CHECK(x.sizes() == y.sizes(), "x and y must have the same shape");
    auto xc = x.contiguous();
    auto yc = y.contiguous();
    auto out = torch::empty_like(xc);
    const int64_t n = xc.numel();
    if (n == 0) return out;
    const float a = (float)alpha, b = (float)beta;
    auto stream = c10::cuda::getCurrentCUDAStream();
    const int threads = 256;
    const bool aligned = ((reinterpret_cast<uintptr_t>(xc.data_ptr<float>()) |
                           reinterpret_cast<uintptr_t>(yc.data_ptr<float>()) |
                           reinterpret_cast<uintptr_t>(out.data_ptr<float>())) % 16) == 0;
    int64_t n4 = aligned ? n / 4 : 0;
    if (n4 > 0) {
        int64_t blocks = (n4 + threads - 1) / threads;
        axpby_vec4_kernel<<<blocks, threads, 0, stream>>>(
            reinterpret_cast<const float4*>(xc.data_ptr<float>()),
            reinterpret_cast<const float4*>(yc.data_ptr<float>()),
            reinterpret_cast<float4*>(out.data_ptr<float>()), a, b, n4);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    int64_t start = n4 * 4;
    if (start < n) {
        int64_t blocks = (n - start + threads - 1) / threads;
        axpby_scalar_kernel<<<blocks, threads, 0, stream>>>(
            xc.data_ptr<float>(), yc.data_ptr<float>(), out.data_ptr<float>(), a, b, start, n);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    return out;
}
"""

cpp_source = "torch::Tensor axpby(torch::Tensor x, torch::Tensor y, double alpha, double beta);"

_ext = load_inline(
    name="kg_elementwise_axpby_float4",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["axpby"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, alpha: float, beta: float):
        super().__init__()
        self.alpha = alpha
        self.beta = beta

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return _ext.axpby(x, y, self.alpha, self.beta)
