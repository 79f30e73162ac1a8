"""Convolution as im2col + tiled GEMM: unfold patches into columns, multiply by the weight matrix."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>

constexpr int TILE = 32;
constexpr int ROWS = 8;
constexpr int PER_THREAD = TILE / ROWS;

// cols[k][p], k = (ci * KH + kh) * KW + kw (the order of weight.view(Cout, -1)),
// p = (n * OH + oh) * OW + ow. Consecutive threads take consecutive p: coalesced writes.
__global__ void im2col_kernel(const float* __restrict__ x, float* __restrict__ cols,
                              int Cin, int H, int W, int KH, int KW, int stride, int pad,
                              int OH, int OW, int64_t P, int64_t total) {
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += step) {
        const int64_t p = i % P;
        const int k = i / P;
        const int kw = k % KW, kh = (k / KW) % KH, ci = k / (KW * KH);
        const int ow = p % OW;
        const int oh = (p / OW) % OH;
        const int64_t n = p / ((int64_t)OW * OH);
        const int iy = oh * stride - pad + kh, ix = ow * stride - pad + kw;
        cols[i] = (iy >= 0 && iy < H && ix >= 0 && ix < W) ? x[((n * Cin + ci) * H + iy) * W + ix] : 0.f;
    }
}

// out[n][co][q] = bias[co] + sum_k Wm[co][k] * cols[k][p], p = n * OHW + q: a (Cout x K) @ (K x P) GEMM
// whose store scatters columns p back into NCHW order.
__global__ void conv_gemm_kernel(const float* __restrict__ Wm, const float* __restrict__ cols,
                                 const float* __restrict__ bias, float* __restrict__ out,
                                 int Cout, int K, int64_t P, int OHW) {
    __shared__ float As[TILE][TILE + 1];   // As[co][k]
    __shared__ float Bs[TILE][TILE];       // Bs[k][p]
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int co0 = blockIdx.y * TILE;
    const int64_t p0 = (int64_t)blockIdx.x * TILE;
    float acc[PER_THREAD] = {0.f, 0.f, 0.f, 0.f};
    for (int k0 = 0; k0 < K; k0 += TILE) {
        for (int r = ty; r < TILE; r += ROWS) {
            As[r][tx] = (co0 + r < Cout && k0 + tx < K) ? Wm[(int64_t)(co0 + r) * K + k0 + tx] : 0.f;
            Bs[r][tx] = (k0 + r < K && p0 + tx < P) ? cols[(int64_t)(k0 + r) * P + p0 + tx] : 0.f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < TILE; ++kk) {
            const float b = Bs[kk][tx];
#pragma unroll
            for (int i = 0; i < PER_THREAD; ++i) acc[i] += As[ty + i * ROWS][kk] * b;
        }
        __syncthreads();
    }
    const int64_t p = p0 + tx;
    if (p >= P) return;
    const int64_t n = p / OHW;
    const int q = p % OHW;
#pragma unroll
    for (int i = 0; i < PER_THREAD; ++i) {
        const int co = co0 + ty + i * ROWS;
        if (co < Cout) out[(n * Cout + co) * OHW + q] = acc[i] + bias[co];
    }
}

torch::Tensor conv2d_im2col(torch::Tensor x, torch::Tensor weight, torch::Tensor bias,
                            int64_t stride, int64_t pad) {
    TORCH_CHECK(x.is_cuda() && weight.is_cuda() && bias.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(x.dim() == 4 && weight.dim() == 4, "x must be NCHW, weight (Cout, Cin, KH, KW)");
    TORCH_CHECK(weight.size(1) == x.size(1), "channel mismatch (groups are not supported)");
    TORCH_CHECK(bias.numel() == weight.size(0), "bias needs one value per output channel");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32 &&
                bias.scalar_type() == torch::kFloat32, "inputs must be float32");
    TORCH_CHECK(x.is_contiguous() && weight.is_contiguous() && bias.is_contiguous(),
                "inputs must be contiguous");
    TORCH_CHECK(stride >= 1 && pad >= 0, "bad stride or padding");
    const int N = x.size(0), Cin = x.size(1), H = x.size(2), W = x.size(3);
    const int Cout = weight.size(0), KH = weight.size(2), KW = weight.size(3);
    const int OH = (H + 2 * pad - KH) / stride + 1, OW = (W + 2 * pad - KW) / stride + 1;
    TORCH_CHECK(OH > 0 && OW > 0, "output would be empty");
    auto out = torch::empty({N, Cout, OH, OW}, x.options());
    if (out.numel() == 0) return out;
    const int K = Cin * KH * KW;
    const int64_t P = (int64_t)N * OH * OW;
    auto cols = torch::empty({K, P}, x.options());
    auto stream = c10::cuda::getCurrentCUDAStream();
    const int64_t total = (int64_t)K * P;
    const int blocks = (int)std::min<int64_t>((total + 255) / 256, 65535);
    im2col_kernel<<<blocks, 256, 0, stream>>>(x.data_ptr<float>(), cols.data_ptr<float>(), Cin, H, W, KH, KW,
                                              (int)stride, (int)pad, OH, OW, P, total);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    const int64_t p_tiles = (P + TILE - 1) / TILE;
    TORCH_CHECK(p_tiles <= 2147483647LL, "too many output positions");
    const dim3 grid((unsigned)p_tiles, (Cout + TILE - 1) / TILE);
    conv_gemm_kernel<<<grid, dim3(TILE, ROWS), 0, stream>>>(weight.data_ptr<float>(), cols.data_ptr<float>(),
                                                           bias.data_ptr<float>(), out.data_ptr<float>(),
                                                           Cout, K, P, OH * OW);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

CPP_SRC = (
    "torch::Tensor conv2d_im2col(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, "
    "int64_t stride, int64_t pad);"
)

_ext = load_inline(
    name="kg_conv2d_im2col_gemm",
    cpp_sources=CPP_SRC,
    cuda_sources=CUDA_SRC,
    functions=["conv2d_im2col"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    """Same nn.Conv2d parameters; im2col kernel + tiled GEMM kernel with the bias fused into the store."""

    def __init__(self, in_channels: int, out_channels: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=3, stride=2, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.conv2d_im2col(x, self.conv.weight, self.conv.bias, 2, 1)
