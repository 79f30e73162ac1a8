"""Six eager pointwise kernels (and five temporaries) fused into one kernel that reads each input once."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>

__device__ __forceinline__ float chain(float x, float y) {
    // expf/cosf (not the __expf/__cosf intrinsics) keep the result within fp32 tolerance of torch.
    return expf(-0.5f * x * x) * cosf(y) + 0.1f * x;
}

__global__ void fused_chain_kernel(const float* __restrict__ x, const float* __restrict__ y,
                                   float* __restrict__ out, int64_t n) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        out[i] = chain(x[i], y[i]);
    }
}

torch::Tensor fused_chain(torch::Tensor x, torch::Tensor y) {
    TORCH_CHECK(x.is_cuda() && y.is_cuda() && x.sizes() == y.sizes(), "same-shape CUDA tensors");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && y.scalar_type() == torch::kFloat32, "float32 only");
    auto xc = x.contiguous();
    auto yc = y.contiguous();
    auto out = torch::empty_like(xc);
    const int64_t n = xc.numel();
    if (n == 0) return out;
    const int threads = 256;
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, xc.get_device());
    int64_t blocks = std::min<int64_t>((n + threads - 1) / threads, (int64_t)sms * 16);
    fused_chain_kernel<<<blocks, threads, 0, c10::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), yc.data_ptr<float>(), out.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_source = "torch::Tensor fused_chain(torch::Tensor x, torch::Tensor y);"

_ext = load_inline(
    name="kg_elementwise_fused_pointwise_chain",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["fused_chain"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return _ext.fused_chain(x, y)
