"""NCHW -> NHWC as a batched 2-D transpose of each image's (C, H*W) matrix through shared memory."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>

constexpr int TILE = 32;
constexpr int ROWS_PER_PASS = 8;

// For image n, x[n] is a (C, HW) matrix and out[n] is its (HW, C) transpose.
// blockIdx.z selects the image; within it the padded tile keeps both global accesses coalesced.
__global__ void nchw_to_nhwc_kernel(const float* __restrict__ x, float* __restrict__ out, int C, int HW) {
    __shared__ float tile[TILE][TILE + 1];
    const int64_t plane = (int64_t)C * HW;
    const float* src = x + blockIdx.z * plane;
    float* dst = out + blockIdx.z * plane;
    const int p = blockIdx.x * TILE + threadIdx.x;   // spatial position (column of src)
    const int c0 = blockIdx.y * TILE;                // first channel (row of src) of the tile
    for (int k = threadIdx.y; k < TILE; k += ROWS_PER_PASS) {
        const int c = c0 + k;
        if (c < C && p < HW) tile[k][threadIdx.x] = src[(int64_t)c * HW + p];
    }
    __syncthreads();
    const int c = c0 + threadIdx.x;
    for (int k = threadIdx.y; k < TILE; k += ROWS_PER_PASS) {
        const int pos = blockIdx.x * TILE + k;
        if (pos < HW && c < C) dst[(int64_t)pos * C + c] = tile[threadIdx.x][k];
    }
}

torch::Tensor nchw_to_nhwc(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.dim() == 4, "x must be NCHW");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    TORCH_CHECK(x.is_contiguous(), "x must be contiguous");
    const int N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
    TORCH_CHECK(N <= 65535, "batch too large for gridDim.z");
    auto out = torch::empty({N, H, W, C}, x.options());
    if (out.numel() == 0) return out;
    const int HW = H * W;
    const dim3 block(TILE, ROWS_PER_PASS);
    const dim3 grid((HW + TILE - 1) / TILE, (C + TILE - 1) / TILE, N);
    nchw_to_nhwc_kernel<<<grid, block, 0, c10::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), out.data_ptr<float>(), C, HW);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

CPP_SRC = "torch::Tensor nchw_to_nhwc(torch::Tensor x);"

_ext = load_inline(
    name="kg_transpose_nchw_to_nhwc",
    cpp_sources=CPP_SRC,
    cuda_sources=CUDA_SRC,
    functions=["nchw_to_nhwc"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    """x.permute(0, 2, 3, 1).contiguous() computed by one custom kernel."""

    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.nchw_to_nhwc(x)
