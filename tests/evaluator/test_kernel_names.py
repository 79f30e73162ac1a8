"""Kernel names read from CUDA sources: what the strict check looks for in the profiler's trace."""

from __future__ import annotations

from evaluator.buildcache import kernel_names


def test_plain_templated_and_qualified_kernels() -> None:
    src = """
    __global__ void relu_kernel(const float* x, float* y, int n) {}
    template <int BLOCK>
    __global__ void row_sum(const float* __restrict__ x, float* out) {}
    extern "C" __global__ static void scale_kernel(float* p) {}
    __device__ float helper(float v) { return v; }
    void launcher(torch::Tensor x) { relu_kernel<<<1, 1>>>(nullptr, nullptr, 0); }
    """
    assert kernel_names(src) == {"relu_kernel", "row_sum", "scale_kernel"}


def test_launch_bounds_is_not_taken_for_the_kernel_name() -> None:
    src = """
    __global__ void __launch_bounds__(256) gemm_tile(const float* a, float* c) {}
    __global__ void __launch_bounds__(128, 4) reduce_rows(float* p) {}
    __launch_bounds__(64) __global__ void transpose_tile(float* p) {}
    """
    assert kernel_names(src) == {"gemm_tile", "reduce_rows", "transpose_tile"}
