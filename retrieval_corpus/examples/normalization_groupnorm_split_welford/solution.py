"""GroupNorm for few, large groups: each group split over many blocks, partial statistics merged exactly."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>

constexpr int THREADS = 256;

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ float block_allreduce_sum(float v, float* shm) {
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_sum(v);
    if (lane == 0) shm[warp] = v;
    __syncthreads();
    float total = 0.0f;
    for (int w = 0; w < THREADS / 32; ++w) total += shm[w];
    __syncthreads();
    return total;
}

// grid (split, N*G). A group's channels are adjacent in NCHW, so group g is one contiguous span of
// group_elems floats. Each block takes one chunk of it: mean first, then the squared deviations from that
// mean (the chunk is re-read from L2), giving an exact (count, mean, M2) triple per chunk.
__global__ void __launch_bounds__(THREADS) group_partial_kernel(
        const float* __restrict__ x, float* __restrict__ p_count, float* __restrict__ p_mean,
                float* __restrict__ p_m2,
        int64_t group_elems, int64_t chunk) {
    __shared__ float shm[32];
    const int64_t g = blockIdx.y;
    const int64_t begin = (int64_t)blockIdx.x * chunk;
    const int64_t end = begin + chunk < group_elems ? begin + chunk : group_elems;
    const int64_t count = end > begin ? end - begin : 0;
    const float* xg = x + g * group_elems;
    float s = 0.0f;
    for (int64_t i = begin + threadIdx.x; i < end; i += THREADS) s += xg[i];
    s = block_allreduce_sum(s, shm);
    const float mean = count > 0 ? s / (float)count : 0.0f;
    float q = 0.0f;
    for (int64_t i = begin + threadIdx.x; i < end; i += THREADS) {
        const float d = xg[i] - mean;
        q += d * d;
    }
    q = block_allreduce_sum(q, shm);
    if (threadIdx.x == 0) {
        const int64_t idx = g * gridDim.x + blockIdx.x;
        p_count[idx] = (float)count;
        p_mean[idx] = mean;
        p_m2[idx] = q;
    }
}

// One thread per group merges its chunks with Chan's parallel-variance formula.
__global__ void group_finalize_kernel(const float* __restrict__ p_count, const float* __restrict__ p_mean,
                                      const float* __restrict__ p_m2, float* __restrict__ mean_out,
                                      float* __restrict__ rstd_out, int groups_total, int split, float eps) {
    const int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= groups_total) return;
    float n = 0.0f, mean = 0.0f, m2 = 0.0f;
    for (int k = 0; k < split; ++k) {
        const int idx = g * split + k;
        const float nb = p_count[idx];
        if (nb == 0.0f) continue;
        const float nt = n + nb;
        const float d = p_mean[idx] - mean;
        mean += d * (nb / nt);
        m2 += p_m2[idx] + d * d * (n * nb / nt);
        n = nt;
    }
    mean_out[g] = mean;
    rstd_out[g] = rsqrtf(m2 / n + eps);   // biased variance, as GroupNorm
}

__global__ void group_apply_kernel(const float* __restrict__ x, const float* __restrict__ mean,
        const float* __restrict__ rstd,
                                   const float* __restrict__ w, const float* __restrict__ b,
                                           float* __restrict__ out,
                                   int64_t n, int64_t hw, int64_t channels, int64_t ch_per_group) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const int64_t nc = i / hw;                 // flat (n, c) plane index
        const int64_t c = nc % channels;
        const int64_t g = (nc / channels) * (channels / ch_per_group) + c / ch_per_group;
        out[i] = (x[i] - mean[g]) * rstd[g] * w[c] + b[c];
    }
}

torch::Tensor groupnorm_forward(torch::Tensor x, int64_t groups, torch::Tensor weight, torch::Tensor bias,
        double eps) {
    TORCH_CHECK(x.is_cuda() && x.dim() >= 2 && x.scalar_type() == torch::kFloat32,
            "x: float32 CUDA (N, C, ...)");
    const int64_t N = x.size(0), C = x.size(1);
    TORCH_CHECK(C % groups == 0, "channels must divide into groups");
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    if (xc.numel() == 0) return out;
    const int64_t hw = xc.numel() / (N * C);
    const int64_t groups_total = N * groups;
    const int64_t group_elems = (C / groups) * hw;
    TORCH_CHECK(groups_total <= 65535, "too many groups for gridDim.y");
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, xc.get_device());
    // Enough chunks for ~4 blocks per SM, but no chunk smaller than 2048 elements.
    int64_t split = std::max<int64_t>(1, ((int64_t)sms * 4 + groups_total - 1) / groups_total);
    split = std::min<int64_t>(split, std::max<int64_t>(1, group_elems / 2048));
    const int64_t chunk = (group_elems + split - 1) / split;
    auto opts = xc.options();
    auto p_count = torch::empty({groups_total * split}, opts);
    auto p_mean = torch::empty({groups_total * split}, opts);
    auto p_m2 = torch::empty({groups_total * split}, opts);
    auto mean = torch::empty({groups_total}, opts);
    auto rstd = torch::empty({groups_total}, opts);
    auto stream = c10::cuda::getCurrentCUDAStream();
    group_partial_kernel<<<dim3((unsigned)split, (unsigned)groups_total), THREADS, 0, stream>>>(
        xc.data_ptr<float>(), p_count.data_ptr<float>(), p_mean.data_ptr<float>(), p_m2.data_ptr<float>(),
                group_elems, chunk);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    group_finalize_kernel<<<(groups_total + 127) / 128, 128, 0, stream>>>(
        p_count.data_ptr<float>(), p_mean.data_ptr<float>(), p_m2.data_ptr<float>(), mean.data_ptr<float>(),
        rstd.data_ptr<float>(), (int)groups_total, (int)split, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    auto wc = weight.contiguous();
    auto bc = bias.contiguous();
    const int64_t n = xc.numel();
    const int64_t blocks = std::min<int64_t>((n + 255) / 256, (int64_t)sms * 8);
    group_apply_kernel<<<blocks, 256, 0, stream>>>(xc.data_ptr<float>(), mean.data_ptr<float>(),
            rstd.data_ptr<float>(),
        wc.data_ptr<float>(), bc.data_ptr<float>(), out.data_ptr<float>(), n, hw, C, C / groups);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_source = (
    "torch::Tensor groupnorm_forward(torch::Tensor x, int64_t groups, torch::Tensor weight, "
    "torch::Tensor bias, double eps);"
)

_ext = load_inline(
    name="kg_normalization_groupnorm_split_welford",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["groupnorm_forward"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, groups: int, channels: int):
        super().__init__()
        # Parameter holder only: same seeded init as the reference, never called.
        self.norm = nn.GroupNorm(groups, channels, eps=1e-5)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = self.norm
        return _ext.groupnorm_forward(x, n.num_groups, n.weight, n.bias, n.eps)
