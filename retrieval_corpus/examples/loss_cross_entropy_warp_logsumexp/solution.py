"""Cross-entropy without a log_softmax tensor: online logsumexp per row in a warp, then a fixed-order mean."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>

__device__ __forceinline__ void merge(float& m, float& s, float m2, float s2) {
    const float mx = fmaxf(m, m2);
    if (mx == -INFINITY) return;
    s = s * expf(m - mx) + s2 * expf(m2 - mx);
    m = mx;
}

// One warp per sample: online (max, sum-exp) per lane, merged by shuffles; loss = logsumexp - logit[target].
__global__ void ce_row_kernel(const float* __restrict__ logits, const int64_t* __restrict__ targets,
                              float* __restrict__ losses, int64_t rows, int64_t classes) {
    const int64_t row = (int64_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= rows) return;
    const float* xr = logits + row * classes;
    float m = -INFINITY, s = 0.0f;
    for (int64_t j = lane; j < classes; j += 32) {
        const float v = xr[j];
        if (v > m) { s = s * expf(m - v) + 1.0f; m = v; }
        else { s += expf(v - m); }
    }
    for (int o = 16; o > 0; o >>= 1) {
        const float m2 = __shfl_xor_sync(0xffffffffu, m, o);
        const float s2 = __shfl_xor_sync(0xffffffffu, s, o);
        merge(m, s, m2, s2);
    }
    if (lane == 0) {
        const int64_t t = targets[row];
        // An out-of-range target poisons the loss instead of reading out of bounds.
        losses[row] = (t >= 0 && t < classes) ? (m + logf(s)) - xr[t] : NAN;
    }
}

// Single block, fixed order: reproducible mean over the batch.
__global__ void mean_kernel(const float* __restrict__ v, float* __restrict__ out, int64_t n) {
    __shared__ float shm[32];
    float acc = 0.0f;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) acc += v[i];
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if (threadIdx.x % 32 == 0) shm[threadIdx.x / 32] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        float total = 0.0f;
        for (int w = 0; w < (int)(blockDim.x / 32); ++w) total += shm[w];
        *out = total / (float)n;
    }
}

torch::Tensor cross_entropy_mean(torch::Tensor logits, torch::Tensor targets) {
    TORCH_CHECK(logits.is_cuda() && logits.dim() == 2 && logits.scalar_type() == torch::kFloat32,
            "logits: float32 CUDA (B, C)");
    TORCH_CHECK(targets.is_cuda() && targets.scalar_type() == torch::kInt64 &&
                targets.numel() == logits.size(0),
                "targets: int64 CUDA (B,)");
    auto lc = logits.contiguous();
    auto tc = targets.contiguous();
    const int64_t rows = lc.size(0), classes = lc.size(1);
    TORCH_CHECK(rows > 0, "empty batch");
    auto losses = torch::empty({rows}, lc.options());
    auto out = torch::empty({}, lc.options());
    auto stream = c10::cuda::getCurrentCUDAStream();
    ce_row_kernel<<<(rows + 7) / 8, 256, 0, stream>>>(lc.data_ptr<float>(), tc.data_ptr<int64_t>(),
            losses.data_ptr<float>(), rows, classes);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    mean_kernel<<<1, 1024, 0, stream>>>(losses.data_ptr<float>(), out.data_ptr<float>(), rows);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_source = "torch::Tensor cross_entropy_mean(torch::Tensor logits, torch::Tensor targets);"

_ext = load_inline(
    name="kg_loss_cross_entropy_warp_logsumexp",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["cross_entropy_mean"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return _ext.cross_entropy_mean(logits, targets)
