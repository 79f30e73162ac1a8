"""Broadcast per-channel bias and scale in one grid-stride kernel instead of two eager kernels."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>

// Grid-stride loop: a fixed grid (a few waves of blocks per SM) walks the whole tensor, so the launch
// size does not depend on the tensor size and every thread amortises its setup over many elements.
__global__ void channel_affine_kernel(const float* __restrict__ x, const float* __restrict__ bias,
                                      const float* __restrict__ scale, float* __restrict__ out,
                                      int64_t n, int64_t hw, int64_t channels) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const int64_t c = (i / hw) % channels;   // NCHW: channel index of flat element i
        out[i] = (x[i] + __ldg(bias + c)) * __ldg(scale + c);
    }
}

torch::Tensor channel_affine(torch::Tensor x, torch::Tensor bias, torch::Tensor scale) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 4 && x.scalar_type() == torch::kFloat32, "x: float32 CUDA NCHW");
    const int64_t channels = x.size(1);
    TORCH_CHECK(bias.numel() == channels && scale.numel() == channels, "one bias and scale per channel");
    auto xc = x.contiguous();
    auto bc = bias.contiguous();
    auto sc = scale.contiguous();
    auto out = torch::empty_like(xc);
    const int64_t n = xc.numel();
    if (n == 0) return out;
    const int threads = 256;
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, xc.get_device());
    int64_t blocks = std::min<int64_t>((n + threads - 1) / threads, (int64_t)sms * 8);
    channel_affine_kernel<<<blocks, threads, 0, c10::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), bc.data_ptr<float>(), sc.data_ptr<float>(), out.data_ptr<float>(),
        n, xc.size(2) * xc.size(3), channels);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_source = "torch::Tensor channel_affine(torch::Tensor x, torch::Tensor bias, torch::Tensor scale);"

_ext = load_inline(
    name="kg_elementwise_channel_bias_scale_gridstride",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["channel_affine"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        # Same parameters, created in the same order as the reference, so seeded init matches.
        self.bias = nn.Parameter(torch.randn(channels, 1, 1) * 0.1)
        self.scale = nn.Parameter(torch.rand(channels, 1, 1) + 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.channel_affine(x, self.bias, self.scale)
