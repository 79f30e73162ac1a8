"""The region launcher on a GPU, through the C launcher and through ctypes: every call launches with its
own tensors and scalars, from any thread and on that thread's stream, in the device's primary context
however the thread got there."""

from __future__ import annotations

import threading

import pytest

SOURCE = """typedef long long int64_t;
extern "C" __global__ void scaled(const float* x, const float* y, float* out, float s, float t, int64_t n) {
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = x[i] * s + y[i] * t;
}
"""
N = 1 << 16


@pytest.fixture(scope="module", params=["c launcher", "ctypes"])
def kernel(request):  # noqa: ANN001, ANN201 - a RegionKernel, imported only where torch has a GPU
    from evaluator.regions.launch import RegionKernel

    built = RegionKernel(SOURCE, "scaled", 2, 2, (N,), N, c_launcher=request.param == "c launcher")
    assert (built._launcher is not None) == (request.param == "c launcher")  # a GPU host builds it
    return built


@pytest.mark.gpu
def test_every_call_launches_with_its_own_tensors_and_scalars(kernel) -> None:  # noqa: ANN001
    import torch

    for s, t in ((1.0, 0.0), (-2.5, 3.0), (0.5, 0.25)):
        x, y = torch.randn(N, device="cuda"), torch.randn(N, device="cuda")
        torch.testing.assert_close(kernel(x, y, s, t), x * s + y * t, rtol=1e-6, atol=1e-6)  # FMA or not
    x = torch.randn(N, device="cuda")
    torch.testing.assert_close(kernel(x, x, 1, 1), 2 * x)  # int scalars, one tensor twice


@pytest.mark.gpu
def test_threads_calling_one_kernel_each_get_their_own_result(kernel) -> None:  # noqa: ANN001
    """A thread that never touched CUDA gets the primary context made current; concurrent calls of one
    kernel never mix their arguments."""
    import torch

    errors: list[BaseException] = []

    def work(seed: int) -> None:
        try:
            stream = torch.cuda.Stream()
            with torch.cuda.stream(stream):
                for round_ in range(50):
                    g = torch.Generator(device="cuda").manual_seed(seed * 1000 + round_)
                    x = torch.randn(N, device="cuda", generator=g)
                    out = kernel(x, x, float(seed), -1.0)
                    torch.testing.assert_close(out, x * (seed - 1.0), rtol=0, atol=1e-5)
            stream.synchronize()
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread's assertion
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(2, 8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors[0]


OTHER = """typedef long long int64_t;
extern "C" __global__ void rowsum(const float* x, float* out, int64_t n) {  // n rows of 8
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += stride) {
        float s = 0.0f;
        for (int j = 0; j < 8; ++j) s += x[i * 8 + j];
        out[i] = s;
    }
}
extern "C" __global__ void accumulate(const float* x, float* out, int64_t n) {
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += stride) out[i] += x[i];
}
"""


@pytest.mark.gpu
@pytest.mark.parametrize("c_launcher", [True, False])
def test_outputs_are_fresh_contiguous_and_zeroed_where_the_kernel_adds(c_launcher: bool) -> None:
    """An output shaped unlike the input, a strided input made contiguous, and a kernel that adds into
    its output starting from zeros even where freed memory of the same size holds other values."""
    import torch

    from evaluator.regions.launch import RegionKernel

    rows = 1000
    rowsum = RegionKernel(OTHER, "rowsum", 1, 0, (rows,), rows, c_launcher=c_launcher)
    x = torch.randn(8, rows, device="cuda").t()  # (rows, 8), not contiguous
    torch.testing.assert_close(rowsum(x), x.sum(1))
    accumulate = RegionKernel(OTHER, "accumulate", 1, 0, (N,), N, zero=True, c_launcher=c_launcher)
    for _ in range(3):
        stale = torch.full((N,), 7.0, device="cuda")
        del stale  # the allocator hands this block out next
        y = torch.randn(N, device="cuda")
        first, second = accumulate(y), accumulate(y)
        assert first.data_ptr() != second.data_ptr()
        assert torch.equal(first, y) and torch.equal(second, y)
