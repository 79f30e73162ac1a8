"""v @ A: threads own columns (coalesced float4 rows), rows split across blocks, deterministic 2-pass sum."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>

constexpr int COLS4 = 32;   // float4 columns per block (128 floats), threadIdx.x
constexpr int ROW_LANES = 8;  // threads walking rows in parallel, threadIdx.y

// Pass 1: block (bx, by) sums rows [by * rows_per_split, ...) of columns [bx*128, bx*128+128).
// Each row step reads 32 consecutive float4 = 512 contiguous bytes. The 8 row lanes are combined in
// shared memory and one partial per column and split is written.
__global__ void vecmat_partial_kernel(const float* __restrict__ v, const float4* __restrict__ A,
                                      float4* __restrict__ partial, int M, int N4, int rows_per_split) {
    __shared__ float4 red[ROW_LANES][COLS4];
    const int c4 = blockIdx.x * COLS4 + threadIdx.x;
    const int r_begin = blockIdx.y * rows_per_split;
    const int r_end = min(M, r_begin + rows_per_split);
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
    if (c4 < N4) {
        for (int r = r_begin + threadIdx.y; r < r_end; r += ROW_LANES) {
            const float s = v[r];
            const float4 a = A[(int64_t)r * N4 + c4];
            acc.x += s * a.x; acc.y += s * a.y; acc.z += s * a.z; acc.w += s * a.w;
        }
    }
    red[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && c4 < N4) {
        float4 sum = red[0][threadIdx.x];
        for (int l = 1; l < ROW_LANES; ++l) {
            const float4 o = red[l][threadIdx.x];
            sum.x += o.x; sum.y += o.y; sum.z += o.z; sum.w += o.w;
        }
        partial[(int64_t)blockIdx.y * N4 + c4] = sum;
    }
}

// Pass 2: y[c] = sum over splits of partial[s][c], in a fixed order (deterministic, no atomics).
__global__ void sum_splits_kernel(const float* __restrict__ partial, float* __restrict__ y,
                                  int N, int splits) {
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= N) return;
    float acc = 0.f;
    for (int s = 0; s < splits; ++s) acc += partial[(int64_t)s * N + c];
    y[c] = acc;
}

torch::Tensor vecmat(torch::Tensor v, torch::Tensor a) {
    TORCH_CHECK(v.is_cuda() && a.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(v.dim() == 1 && a.dim() == 2 && a.size(0) == v.size(0), "need v (M) and a (M, N)");
    TORCH_CHECK(v.scalar_type() == torch::kFloat32 && a.scalar_type() == torch::kFloat32,
                "inputs must be float32");
    TORCH_CHECK(v.is_contiguous() && a.is_contiguous(), "inputs must be contiguous");
    const int M = a.size(0), N = a.size(1);
    TORCH_CHECK(N % 4 == 0, "N must be a multiple of 4 for float4 loads");
    TORCH_CHECK(reinterpret_cast<uintptr_t>(a.data_ptr<float>()) % 16 == 0, "a must be 16-byte aligned");
    auto y = torch::empty({N}, a.options());
    if (N == 0) return y;
    if (M == 0) return y.zero_();
    const int splits = std::max(1, std::min(32, (M + 255) / 256));
    const int rows_per_split = (M + splits - 1) / splits;
    auto partial = torch::empty({splits, N}, a.options());
    const int N4 = N / 4;
    auto stream = c10::cuda::getCurrentCUDAStream();
    const dim3 block(COLS4, ROW_LANES);
    const dim3 grid((N4 + COLS4 - 1) / COLS4, splits);
    vecmat_partial_kernel<<<grid, block, 0, stream>>>(
        v.data_ptr<float>(), reinterpret_cast<const float4*>(a.data_ptr<float>()),
        reinterpret_cast<float4*>(partial.data_ptr<float>()), M, N4, rows_per_split);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    sum_splits_kernel<<<(N + 255) / 256, 256, 0, stream>>>(
        partial.data_ptr<float>(), y.data_ptr<float>(), N, splits);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

CPP_SRC = "torch::Tensor vecmat(torch::Tensor v, torch::Tensor a);"

_ext = load_inline(
    name="kg_gemv_transposed_split",
    cpp_sources=CPP_SRC,
    cuda_sources=CUDA_SRC,
    functions=["vecmat"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    """v @ a with a column-parallel, row-split GEMV and a deterministic second pass."""

    def __init__(self) -> None:
        super().__init__()

    def forward(self, v: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        return _ext.vecmat(v, a)
