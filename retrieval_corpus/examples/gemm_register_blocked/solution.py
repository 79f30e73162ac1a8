"""SGEMM with 64x64 block tiles and 4x4 register micro-tiles, alpha/beta epilogue fused."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>

constexpr int BM = 64, BN = 64, BK = 16;   // block tile of C and depth of one K step
constexpr int TM = 4, TN = 4;              // register micro-tile per thread
constexpr int THREADS = (BM / TM) * (BN / TN);   // 256

// Each thread keeps a 4x4 block of C in registers. Per k it loads 4 values of A and 4 of B from
// shared memory as two float4 and does 16 FMAs: 8 shared loads per 16 FMAs instead of 2 per 1.
// A's tile is stored k-major (As[k][m]) so a thread's 4 rows are contiguous; the +4 padding keeps
// float4 alignment and spreads the transposing stores over the banks.
__global__ void __launch_bounds__(THREADS)
sgemm_kernel(const float* __restrict__ A, const float* __restrict__ B, const float* __restrict__ C,
             float* __restrict__ D, int M, int N, int K, float alpha, float beta) {
    __shared__ __align__(16) float As[BK][BM + 4];
    __shared__ __align__(16) float Bs[BK][BN];
    const int tid = threadIdx.x;
    const int tx = tid % (BN / TN);   // column group of the micro-tile
    const int ty = tid / (BN / TN);   // row group of the micro-tile
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.f;

    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int i = tid; i < BM * BK; i += THREADS) {   // A tile, coalesced along k
            const int r = i / BK, k = i % BK;
            const int gr = row0 + r, gk = k0 + k;
            As[k][r] = (gr < M && gk < K) ? A[(int64_t)gr * K + gk] : 0.f;
        }
#pragma unroll
        for (int i = tid; i < BK * BN; i += THREADS) {   // B tile, coalesced along n
            const int k = i / BN, c = i % BN;
            const int gk = k0 + k, gc = col0 + c;
            Bs[k][c] = (gk < K && gc < N) ? B[(int64_t)gk * N + gc] : 0.f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const float4 a4 = *reinterpret_cast<const float4*>(&As[k][ty * TM]);
            const float4 b4 = *reinterpret_cast<const float4*>(&Bs[k][tx * TN]);
            const float a[TM] = {a4.x, a4.y, a4.z, a4.w};
            const float b[TN] = {b4.x, b4.y, b4.z, b4.w};
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int r = row0 + ty * TM + i;
        if (r >= M) continue;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int c = col0 + tx * TN + j;
            if (c < N) {
                const int64_t idx = (int64_t)r * N + c;
                D[idx] = alpha * acc[i][j] + beta * C[idx];
            }
        }
    }
}

torch::Tensor sgemm_alpha_beta(torch::Tensor a, torch::Tensor b, torch::Tensor c, double alpha, double beta) {
    TORCH_CHECK(a.is_cuda() && b.is_cuda() && c.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(a.dim() == 2 && b.dim() == 2 && c.dim() == 2, "inputs must be 2-D");
    TORCH_CHECK(a.size(1) == b.size(0), "inner dimensions differ");
    TORCH_CHECK(c.size(0) == a.size(0) && c.size(1) == b.size(1), "c must be (M, N)");
    TORCH_CHECK(a.scalar_type() == torch::kFloat32 && b.scalar_type() == torch::kFloat32 &&
                c.scalar_type() == torch::kFloat32, "inputs must be float32");
    TORCH_CHECK(a.is_contiguous() && b.is_contiguous() && c.is_contiguous(), "inputs must be contiguous");
    const int M = a.size(0), K = a.size(1), N = b.size(1);
    auto d = torch::empty({M, N}, a.options());
    if (d.numel() == 0) return d;
    const dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
    sgemm_kernel<<<grid, THREADS, 0, c10::cuda::getCurrentCUDAStream()>>>(
        a.data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>(), d.data_ptr<float>(),
        M, N, K, (float)alpha, (float)beta);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return d;
}
"""

CPP_SRC = (
    "torch::Tensor sgemm_alpha_beta(torch::Tensor a, torch::Tensor b, torch::Tensor c, "
    "double alpha, double beta);"
)

_ext = load_inline(
    name="kg_gemm_register_blocked",
    cpp_sources=CPP_SRC,
    cuda_sources=CUDA_SRC,
    functions=["sgemm_alpha_beta"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    """alpha * (a @ b) + beta * c in one register-blocked GEMM kernel."""

    def __init__(self, alpha: float, beta: float) -> None:
        super().__init__()
        self.alpha = alpha
        self.beta = beta

    def forward(self, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        return _ext.sgemm_alpha_beta(a, b, c, self.alpha, self.beta)
