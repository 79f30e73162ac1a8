"""The region launcher on a GPU: every call launches with its own tensors and scalars, from any thread and
on that thread's stream, in the device's primary context however the thread got there."""

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


@pytest.fixture(scope="module")
def kernel():  # noqa: ANN201 - a RegionKernel, imported only where torch has a GPU
    from evaluator.regions.launch import RegionKernel

    return RegionKernel(SOURCE, "scaled", 2, 2, (N,), N)


@pytest.mark.gpu
def test_every_call_launches_with_its_own_tensors_and_scalars(kernel) -> None:  # noqa: ANN001
    import torch

    for s, t in ((1.0, 0.0), (-2.5, 3.0), (0.5, 0.25)):
        x, y = torch.randn(N, device="cuda"), torch.randn(N, device="cuda")
        torch.testing.assert_close(kernel(x, y, s, t), x * s + y * t, rtol=0, atol=1e-6)
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
