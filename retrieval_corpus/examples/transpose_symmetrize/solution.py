"""Fused transpose + add + scale: the mirrored tile goes through shared memory, the direct one does not."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>

constexpr int TILE = 32;
constexpr int ROWS_PER_PASS = 8;

// Block (bx, by) of matrix b writes out[r][c] for r in tile row by, c in tile column bx.
// x[r][c] is read directly (coalesced along c). x[c][r] comes from the mirrored tile, which is
// loaded with coalesced reads along r and then read column-wise from the padded shared tile.
__global__ void symmetrize_kernel(const float* __restrict__ x, float* __restrict__ out, int n) {
    __shared__ float mirror[TILE][TILE + 1];
    const int64_t plane = (int64_t)n * n;
    const float* xb = x + blockIdx.z * plane;
    float* ob = out + blockIdx.z * plane;
    const int r0 = blockIdx.y * TILE;
    const int c0 = blockIdx.x * TILE;
    // mirror[k][t] = x[c0 + k][r0 + t]
    for (int k = threadIdx.y; k < TILE; k += ROWS_PER_PASS) {
        const int row = c0 + k, col = r0 + threadIdx.x;
        if (row < n && col < n) mirror[k][threadIdx.x] = xb[(int64_t)row * n + col];
    }
    __syncthreads();
    const int c = c0 + threadIdx.x;
    for (int k = threadIdx.y; k < TILE; k += ROWS_PER_PASS) {
        const int r = r0 + k;
        if (r < n && c < n) {
            // x[c][r] = mirror[c - c0][r - r0] = mirror[threadIdx.x][k]
            ob[(int64_t)r * n + c] = 0.5f * (xb[(int64_t)r * n + c] + mirror[threadIdx.x][k]);
        }
    }
}

torch::Tensor symmetrize(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.dim() == 3 && x.size(1) == x.size(2), "x must be (batch, n, n)");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    TORCH_CHECK(x.is_contiguous(), "x must be contiguous");
    TORCH_CHECK(x.size(0) <= 65535, "batch too large for gridDim.z");
    auto out = torch::empty_like(x);
    if (out.numel() == 0) return out;
    const int n = x.size(1);
    const dim3 block(TILE, ROWS_PER_PASS);
    const dim3 grid((n + TILE - 1) / TILE, (n + TILE - 1) / TILE, x.size(0));
    symmetrize_kernel<<<grid, block, 0, c10::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), out.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

CPP_SRC = "torch::Tensor symmetrize(torch::Tensor x);"

_ext = load_inline(
    name="kg_transpose_symmetrize",
    cpp_sources=CPP_SRC,
    cuda_sources=CUDA_SRC,
    functions=["symmetrize"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    """0.5 * (x + x^T) in one pass over memory instead of a transpose copy plus two elementwise ops."""

    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.symmetrize(x)
