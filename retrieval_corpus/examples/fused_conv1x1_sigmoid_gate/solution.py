"""cuDNN 1x1 convolution without bias, then one kernel for bias + sigmoid + multiply with the input."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>

// out = x * sigmoid(g + bias[c]): the epilogue reads a second tensor (the conv input x) with the same
// NCHW layout as the conv output g, so both are indexed by the same flat float4 offset.
__global__ void gate_kernel(const float4* __restrict__ x, const float4* __restrict__ g,
                            const float* __restrict__ bias,
                            float4* __restrict__ out, int64_t total4, int hw4, int C) {
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total4; i += step) {
        const float b = bias[(i / hw4) % C];
        const float4 xv = x[i];
        const float4 gv = g[i];
        out[i] = make_float4(xv.x * (1.0f / (1.0f + expf(-(gv.x + b)))),
                             xv.y * (1.0f / (1.0f + expf(-(gv.y + b)))),
                             xv.z * (1.0f / (1.0f + expf(-(gv.z + b)))),
                             xv.w * (1.0f / (1.0f + expf(-(gv.w + b)))));
    }
}

torch::Tensor sigmoid_gate(torch::Tensor x, torch::Tensor g, torch::Tensor bias) {
    TORCH_CHECK(x.is_cuda() && g.is_cuda() && bias.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(x.dim() == 4 && g.sizes() == x.sizes(), "x and g must be NCHW of the same shape");
    const int C = x.size(1);
    TORCH_CHECK(bias.numel() == C, "bias needs one value per channel");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && g.scalar_type() == torch::kFloat32 &&
                bias.scalar_type() == torch::kFloat32, "inputs must be float32");
    TORCH_CHECK(x.is_contiguous() && g.is_contiguous() && bias.is_contiguous(), "inputs must be contiguous");
    const int64_t hw = x.size(2) * x.size(3);
    TORCH_CHECK(hw % 4 == 0, "H*W must be a multiple of 4 for float4 access");
    auto out = torch::empty_like(x);
    const int64_t total4 = x.numel() / 4;
    if (total4 == 0) return out;
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((total4 + threads - 1) / threads, 65535);
    gate_kernel<<<blocks, threads, 0, c10::cuda::getCurrentCUDAStream()>>>(
        reinterpret_cast<const float4*>(x.data_ptr<float>()),
        reinterpret_cast<const float4*>(g.data_ptr<float>()),
        bias.data_ptr<float>(), reinterpret_cast<float4*>(out.data_ptr<float>()), total4, (int)(hw / 4), C);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

CPP_SRC = "torch::Tensor sigmoid_gate(torch::Tensor x, torch::Tensor g, torch::Tensor bias);"

_ext = load_inline(
    name="kg_fused_conv1x1_sigmoid_gate",
    cpp_sources=CPP_SRC,
    cuda_sources=CUDA_SRC,
    functions=["sigmoid_gate"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    """1x1 convolution stays in cuDNN; bias, sigmoid and the gating product are one kernel."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.gate = nn.Conv2d(channels, channels, kernel_size=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        g = F.conv2d(x, self.gate.weight, None)
        return _ext.sigmoid_gate(x, g, self.gate.bias)
