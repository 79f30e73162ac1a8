"""Training-mode BatchNorm2d: per-channel statistics split over blocks and merged; running stats updated."""

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

// grid (split, C): block (k, c) covers images [k*planes, (k+1)*planes) of channel c. A channel's data is
// N separate H*W planes, so loop over planes and stream each plane contiguously (no per-element division).
__global__ void __launch_bounds__(THREADS) bn_partial_kernel(
        const float* __restrict__ x, float* __restrict__ p_count, float* __restrict__ p_mean,
                float* __restrict__ p_m2,
        int64_t N, int64_t C, int64_t hw, int64_t planes) {
    __shared__ float shm[32];
    const int64_t c = blockIdx.y;
    const int64_t n0 = (int64_t)blockIdx.x * planes;
    const int64_t n1 = n0 + planes < N ? n0 + planes : N;
    const float count = n1 > n0 ? (float)((n1 - n0) * hw) : 0.0f;
    float s = 0.0f;
    for (int64_t n = n0; n < n1; ++n) {
        const float* xp = x + (n * C + c) * hw;
        for (int64_t p = threadIdx.x; p < hw; p += THREADS) s += xp[p];
    }
    s = block_allreduce_sum(s, shm);
    const float mean = count > 0.0f ? s / count : 0.0f;
    float q = 0.0f;
    for (int64_t n = n0; n < n1; ++n) {
        const float* xp = x + (n * C + c) * hw;
        for (int64_t p = threadIdx.x; p < hw; p += THREADS) {
            const float d = xp[p] - mean;
            q += d * d;
        }
    }
    q = block_allreduce_sum(q, shm);
    if (threadIdx.x == 0) {
        const int64_t idx = c * gridDim.x + blockIdx.x;
        p_count[idx] = count;
        p_mean[idx] = mean;
        p_m2[idx] = q;
    }
}

// One thread per channel: merge chunks (Chan), fold gamma/beta into scale/shift, update running stats.
__global__ void bn_finalize_kernel(const float* __restrict__ p_count, const float* __restrict__ p_mean,
                                   const float* __restrict__ p_m2, const float* __restrict__ gamma,
                                   const float* __restrict__ beta, float* __restrict__ running_mean,
                                   float* __restrict__ running_var, int64_t* __restrict__ num_batches,
                                   float* __restrict__ scale, float* __restrict__ shift,
                                   int C, int split, float eps, float momentum) {
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c == 0) *num_batches += 1;
    if (c >= C) return;
    float n = 0.0f, mean = 0.0f, m2 = 0.0f;
    for (int k = 0; k < split; ++k) {
        const int idx = c * split + k;
        const float nb = p_count[idx];
        if (nb == 0.0f) continue;
        const float nt = n + nb;
        const float d = p_mean[idx] - mean;
        mean += d * (nb / nt);
        m2 += p_m2[idx] + d * d * (n * nb / nt);
        n = nt;
    }
    const float invstd = rsqrtf(m2 / n + eps);             // normalise with the biased variance
    scale[c] = invstd * gamma[c];
    shift[c] = beta[c] - mean * invstd * gamma[c];
    const float unbiased = n > 1.0f ? m2 / (n - 1.0f) : m2;  // running_var uses the unbiased one
    running_mean[c] = (1.0f - momentum) * running_mean[c] + momentum * mean;
    running_var[c] = (1.0f - momentum) * running_var[c] + momentum * unbiased;
}

// blockIdx.y = (n, c) plane: scale and shift are loaded once per block.
__global__ void bn_apply_kernel(const float* __restrict__ x, const float* __restrict__ scale,
        const float* __restrict__ shift,
                                float* __restrict__ out, int64_t hw, int64_t C) {
    const int64_t plane = blockIdx.y;
    const int64_t c = plane % C;
    const float a = scale[c], b = shift[c];
    const float* xp = x + plane * hw;
    float* yp = out + plane * hw;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t p = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; p < hw; p += stride) {
        yp[p] = xp[p] * a + b;
    }
}

torch::Tensor batchnorm_train_forward(torch::Tensor x, torch::Tensor gamma, torch::Tensor beta,
                                      torch::Tensor running_mean, torch::Tensor running_var,
                                      torch::Tensor num_batches, double eps, double momentum) {
    TORCH_CHECK(x.is_cuda() && x.dim() >= 2 && x.scalar_type() == torch::kFloat32,
            "x: float32 CUDA (N, C, ...)");
    TORCH_CHECK(running_mean.is_contiguous() && running_var.is_contiguous(),
            "running stats are updated in place");
    const int64_t N = x.size(0), C = x.size(1);
    TORCH_CHECK(N * C <= 65535 && C <= 65535, "grid limits");
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    const int64_t hw = xc.numel() / (N * C);
    TORCH_CHECK(N * hw > 1, "training-mode batch norm needs more than one value per channel");
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, xc.get_device());
    int64_t want = std::max<int64_t>(1, ((int64_t)sms * 4 + C - 1) / C);   // ~4 blocks per SM in total
    want = std::min<int64_t>(want, N);
    const int64_t planes = (N + want - 1) / want;
    const int64_t split = (N + planes - 1) / planes;
    auto opts = xc.options();
    auto p_count = torch::empty({C * split}, opts);
    auto p_mean = torch::empty({C * split}, opts);
    auto p_m2 = torch::empty({C * split}, opts);
    auto scale = torch::empty({C}, opts);
    auto shift = torch::empty({C}, opts);
    auto stream = c10::cuda::getCurrentCUDAStream();
    bn_partial_kernel<<<dim3((unsigned)split, (unsigned)C), THREADS, 0, stream>>>(
        xc.data_ptr<float>(), p_count.data_ptr<float>(), p_mean.data_ptr<float>(), p_m2.data_ptr<float>(), N,
                C, hw, planes);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    auto gc = gamma.contiguous();
    auto bc = beta.contiguous();
    bn_finalize_kernel<<<(C + 127) / 128, 128, 0, stream>>>(
        p_count.data_ptr<float>(), p_mean.data_ptr<float>(), p_m2.data_ptr<float>(), gc.data_ptr<float>(),
                bc.data_ptr<float>(),
        running_mean.data_ptr<float>(), running_var.data_ptr<float>(), num_batches.data_ptr<int64_t>(),
        scale.data_ptr<float>(), shift.data_ptr<float>(), (int)C, (int)split, (float)eps, (float)momentum);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    const int64_t per_plane = std::min<int64_t>((hw + 255) / 256, 32);
    bn_apply_kernel<<<dim3((unsigned)per_plane, (unsigned)(N * C)), 256, 0, stream>>>(
        xc.data_ptr<float>(), scale.data_ptr<float>(), shift.data_ptr<float>(), out.data_ptr<float>(), hw, C);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_source = """
torch::Tensor batchnorm_train_forward(torch::Tensor x, torch::Tensor gamma, torch::Tensor beta,
                                      torch::Tensor running_mean, torch::Tensor running_var,
                                      torch::Tensor num_batches, double eps, double momentum);
"""

_ext = load_inline(
    name="kg_normalization_batchnorm2d_training_stats",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["batchnorm_train_forward"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        # Holds weight, bias and the running buffers (same seeded init as the reference); never called.
        self.bn = nn.BatchNorm2d(channels, eps=1e-5, momentum=0.1)
        with torch.no_grad():
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        bn = self.bn
        if not self.training:
            raise RuntimeError("this kernel implements training-mode batch statistics only")
        return _ext.batchnorm_train_forward(
            x, bn.weight, bn.bias, bn.running_mean, bn.running_var, bn.num_batches_tracked, bn.eps,
            bn.momentum,
        )
