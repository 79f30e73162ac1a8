"""tanh-GELU with float4 loads: each thread transforms four values per 16-byte load."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>

__device__ __forceinline__ float gelu_tanh(float x) {
    const float k0 = 0.7978845608028654f;   // sqrt(2 / pi)
    const float k1 = 0.044715f;
    float inner = k0 * (x + k1 * x * x * x);
    return 0.5f * x * (1.0f + tanhf(inner));
}

__global__ void gelu_vec4_kernel(const float4* __restrict__ x, float4* __restrict__ out, int64_t n4) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
        float4 v = x[i];
        v.x = gelu_tanh(v.x);
        v.y = gelu_tanh(v.y);
        v.z = gelu_tanh(v.z);
        v.w = gelu_tanh(v.w);
        out[i] = v;
    }
}

__global__ void gelu_scalar_kernel(const float* __restrict__ x, float* __restrict__ out, int64_t start,
        int64_t n) {
    int64_t i = start + (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = gelu_tanh(x[i]);
}

torch::Tensor gelu_tanh_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "float32 CUDA tensor expected");
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    const int64_t n = xc.numel();
    if (n == 0) return out;
    auto stream = c10::cuda::getCurrentCUDAStream();
    const int threads = 256;
    // Fresh allocations from the caching allocator are 512-byte aligned; check anyway (x may be a view).
    const bool aligned = ((reinterpret_cast<uintptr_t>(xc.data_ptr<float>()) |
                           reinterpret_cast<uintptr_t>(out.data_ptr<float>())) % 16) == 0;
    const int64_t n4 = aligned ? n / 4 : 0;
    if (n4 > 0) {
        int sms = 0;
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, xc.get_device());
        int64_t blocks = std::min<int64_t>((n4 + threads - 1) / threads, (int64_t)sms * 16);
        gelu_vec4_kernel<<<blocks, threads, 0, stream>>>(
            reinterpret_cast<const float4*>(xc.data_ptr<float>()),
                    reinterpret_cast<float4*>(out.data_ptr<float>()), n4);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    const int64_t start = n4 * 4;
    if (start < n) {
        int64_t blocks = (n - start + threads - 1) / threads;
        gelu_scalar_kernel<<<blocks, threads, 0, stream>>>(xc.data_ptr<float>(), out.data_ptr<float>(), start,
                n);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    return out;
}
"""

cpp_source = "torch::Tensor gelu_tanh_forward(torch::Tensor x);"

_ext = load_inline(
    name="kg_activation_gelu_tanh_float4",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["gelu_tanh_forward"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.gelu_tanh_forward(x)
