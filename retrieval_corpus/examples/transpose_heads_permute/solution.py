"""Permute that keeps the innermost axis: a float4 gather copy, no shared memory needed."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>

// The innermost axis (head_dim) keeps its place, so every output row of head_dim floats is one
// contiguous input row: each thread copies one float4 and both sides stay coalesced.
// out[b][h][s][:] = x[b][s][h][:]
__global__ void split_heads_kernel(const float4* __restrict__ x, float4* __restrict__ out,
                                   int S, int H, int D4, int64_t total) {
    for (int64_t o = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; o < total;
         o += (int64_t)gridDim.x * blockDim.x) {
        const int d4 = o % D4;
        int64_t rest = o / D4;
        const int s = rest % S;
        rest /= S;
        const int h = rest % H;
        const int64_t b = rest / H;
        out[o] = x[((b * S + s) * H + h) * D4 + d4];
    }
}

torch::Tensor split_heads(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.dim() == 4, "x must be (batch, seq, heads, head_dim)");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    TORCH_CHECK(x.is_contiguous(), "x must be contiguous");
    const int B = x.size(0), S = x.size(1), H = x.size(2), D = x.size(3);
    TORCH_CHECK(D % 4 == 0, "head_dim must be a multiple of 4 for float4 copies");
    TORCH_CHECK(reinterpret_cast<uintptr_t>(x.data_ptr<float>()) % 16 == 0, "x must be 16-byte aligned");
    auto out = torch::empty({B, H, S, D}, x.options());
    const int64_t total = out.numel() / 4;
    if (total == 0) return out;
    const int threads = 256;
    const int64_t wanted = (total + threads - 1) / threads;
    const int blocks = (int)std::min<int64_t>(wanted, 65535);
    split_heads_kernel<<<blocks, threads, 0, c10::cuda::getCurrentCUDAStream()>>>(
        reinterpret_cast<const float4*>(x.data_ptr<float>()),
        reinterpret_cast<float4*>(out.data_ptr<float>()),
        S, H, D / 4, total);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

CPP_SRC = "torch::Tensor split_heads(torch::Tensor x);"

_ext = load_inline(
    name="kg_transpose_heads_permute",
    cpp_sources=CPP_SRC,
    cuda_sources=CUDA_SRC,
    functions=["split_heads"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    """x.permute(0, 2, 1, 3).contiguous() as a vectorised index-remapping copy."""

    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.split_heads(x)
