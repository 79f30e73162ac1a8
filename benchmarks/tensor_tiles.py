"""A measured prototype, not used by the pipeline: products on tensor cores with float32's accuracy
(3xTF32), against PyTorch's float32 kernels, to learn whether region products could beat cuBLAS and
cuDNN with TF32 off (the evaluator's setting). Each of the project's own product shapes (a square matmul,
a batched one, a linear layer, convolutions as implicit products) is built by NVRTC, checked against
float64 and against the strict tolerance on PyTorch's float32 output, and timed against it (CUDA events,
TF32 off, median of the trials, L2 flushed between trials). Result (benchmarks/results/tensor_tiles/):
accurate, but 0.19-0.79x PyTorch, so no launch shape uses it.

The tile. A float x is split into big = tf32(x) and small = tf32(x - big); a product a * b is then
a_small * b_big + a_big * b_small + a_big * b_big, whose dropped term (a_small * b_small) is 2^-22 of
a * b. Plain TF32 (one mma) is 2^-11 off per term and misses atol = rtol = 1e-4. A block of 256 threads
(8 warps, 2 x 4) owns a BM x BN output tile, each warp a 64 x 32 piece of it as 4 x 4 m16n8k8 fragments;
per BK-wide slice of K the block stages both operands' tiles in shared memory, split once at staging
(two buffers: the next slice waits in registers while this one is computed). Each slice's three mmas
start from zero and join the total in a rounded float add: chained across all of K, the tensor core's
own accumulation (it truncates) drifted 0.011 from float64 on a 4096-term matmul, against 9.5e-4 for
PyTorch's float32. The operands are read through C expressions over (bt, m, k) and (bt, k, j), so one tile
serves matmuls, linear layers and convolutions as implicit products (m an output position, k an input
channel and filter tap).

    python -m benchmarks.tensor_tiles --out RESULT.json [--blocks-per-sm 1,2] [--only CASE,...]
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from evaluator.regions.launch import RegionKernel
from regions.library import PRELUDE

BM, BN, BK = 128, 128, 8
THREADS = 256
PAD = 8  # floats a staged row is padded by: rows 8 banks apart, a fragment read conflict-free
WARP_M, WARP_N = 64, 32  # a warp's piece of the block's tile: 4 x 4 fragments of 16 x 8
LOADS = BM * BK // THREADS  # values of each operand one thread stages per slice

MMA_HELPERS = r"""__device__ __forceinline__ void kg_split(float x, unsigned& big, unsigned& small) {
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(big) : "f"(x));
    const float rest = x - __uint_as_float(big);
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(small) : "f"(rest));
}
__device__ __forceinline__ void kg_mma(float* c, const unsigned* a, const unsigned* b) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
"""


@dataclass(frozen=True)
class Product:
    """What a tile needs of its product: sizes, and C expressions reading A at (bt, m, k) and B at
    (bt, k, j); `a_m_fast` where A's consecutive m are adjacent in memory (an implicit convolution's
    output positions) rather than its k, `b_j_fast` where B's consecutive j are (a matmul's B, not a linear
    layer's weight). `index` declares what the operand expressions need beyond bt, m, k, j (an implicit
    product's coordinates), as C statements over them."""

    m_rows: int
    n_cols: int
    k_dim: int
    batch: int
    a_at: str
    b_at: str
    a_m_fast: bool
    b_j_fast: bool
    a_index: str = ""
    b_index: str = ""


def grid(product: Product) -> list[int]:
    """The launch grid: one block per BM x BN output tile, per batch."""
    return [-(-product.n_cols // BN), -(-product.m_rows // BM), product.batch]


def tile_loop(product: Product, store: str) -> str:
    """The kernel's code after its signature and opening brace, up to the closing brace: the staged,
    tensor-core sum of every output of the block's tile, then `store` once per output, in a scope where
    `result` is the sum at (bt, m, j) and m < M, j < N hold."""
    p = product
    a_load = (
        f"const int64_t m = kg_m0 + kg_r % {BM}, k = k0 + kg_r / {BM};"
        if p.a_m_fast
        else f"const int64_t m = kg_m0 + kg_r / {BK}, k = k0 + kg_r % {BK};"
    )
    a_slot = f"[kg_r / {BM}][kg_r % {BM}]" if p.a_m_fast else f"[kg_r % {BK}][kg_r / {BK}]"
    b_load = (
        f"const int64_t k = k0 + kg_r / {BN}, j = kg_j0 + kg_r % {BN};"
        if p.b_j_fast
        else f"const int64_t j = kg_j0 + kg_r / {BK}, k = k0 + kg_r % {BK};"
    )
    b_slot = f"[kg_r / {BN}][kg_r % {BN}]" if p.b_j_fast else f"[kg_r % {BK}][kg_r / {BK}]"
    each = f"        #pragma unroll\n        for (int kg_q = 0; kg_q < {LOADS}; ++kg_q) {{\n"
    each += f"            const int kg_r = threadIdx.x + kg_q * {THREADS};\n"
    rows_a, rows_b = BM + PAD, BN + PAD
    return (
        f"    const int64_t M = {p.m_rows}, N = {p.n_cols}, K_ALL = {p.k_dim};\n"
        "    // staged slices, already split: [buffer][big, small][k][m or j]\n"
        f"    __shared__ __align__(16) unsigned kg_sa[2][2][{BK}][{rows_a}];\n"
        f"    __shared__ __align__(16) unsigned kg_sb[2][2][{BK}][{rows_b}];\n"
        "    const int kg_warp = threadIdx.x / 32, kg_lane = threadIdx.x % 32;\n"
        "    const int kg_g = kg_lane / 4, kg_t = kg_lane % 4;  // a fragment's row group and column\n"
        f"    const int kg_wm = (kg_warp / {BN // WARP_N}) * {WARP_M}, "
        f"kg_wn = (kg_warp % {BN // WARP_N}) * {WARP_N};\n"
        f"    const int64_t bt = blockIdx.z, kg_m0 = (int64_t)blockIdx.y * {BM}, "
        f"kg_j0 = (int64_t)blockIdx.x * {BN};\n"
        "    float kg_acc[4][4][4];\n"
        "    #pragma unroll\n    for (int kg_i = 0; kg_i < 4; ++kg_i)\n"
        "        #pragma unroll\n        for (int kg_j = 0; kg_j < 4; ++kg_j)\n"
        "            #pragma unroll\n"
        "            for (int kg_c = 0; kg_c < 4; ++kg_c) kg_acc[kg_i][kg_j][kg_c] = 0.0f;\n"
        "    // the next slice's values wait in registers while the block computes on this one\n"
        f"    float kg_na[{LOADS}], kg_nb[{LOADS}];\n"
        "    auto kg_fetch = [&](int64_t k0) {\n" + each + f"            {{ {a_load}\n{p.a_index}"
        f"              kg_na[kg_q] = (m < M && k < K_ALL) ? {p.a_at} : 0.0f; }}\n"
        f"            {{ {b_load}\n{p.b_index}"
        f"              kg_nb[kg_q] = (k < K_ALL && j < N) ? {p.b_at} : 0.0f; }}\n"
        "        }\n    };\n"
        "    auto kg_stage = [&](int kg_s) {\n"
        + each
        + f"            kg_split(kg_na[kg_q], kg_sa[kg_s][0]{a_slot}, kg_sa[kg_s][1]{a_slot});\n"
        f"            kg_split(kg_nb[kg_q], kg_sb[kg_s][0]{b_slot}, kg_sb[kg_s][1]{b_slot});\n"
        "        }\n    };\n"
        "    kg_fetch(0);\n    kg_stage(0);\n    __syncthreads();\n    int kg_s = 0;\n"
        f"    for (int64_t k0 = 0; k0 < K_ALL; k0 += {BK}) {{\n"
        f"        const bool kg_more = k0 + {BK} < K_ALL;\n"
        f"        if (kg_more) kg_fetch(k0 + {BK});\n"
        "        unsigned kg_ab[4][4], kg_as[4][4];\n"
        "        #pragma unroll\n        for (int kg_i = 0; kg_i < 4; ++kg_i)\n"
        "            #pragma unroll\n            for (int kg_e = 0; kg_e < 4; ++kg_e) {\n"
        "                // a0..a3: rows g, g + 8, g, g + 8 of the fragment; columns t, t, t + 4, t + 4\n"
        f"                const int kg_at = (kg_t + (kg_e / 2) * 4) * {rows_a} + kg_wm + kg_i * 16 + kg_g "
        "+ (kg_e % 2) * 8;\n"
        f"                kg_ab[kg_i][kg_e] = (&kg_sa[kg_s][0][0][0])[kg_at];\n"
        f"                kg_as[kg_i][kg_e] = (&kg_sa[kg_s][1][0][0])[kg_at];\n"
        "            }\n"
        "        #pragma unroll\n        for (int kg_j = 0; kg_j < 4; ++kg_j) {\n"
        "            // b0, b1: rows t, t + 4\n"
        f"            const int kg_bt = kg_t * {rows_b} + kg_wn + kg_j * 8 + kg_g;\n"
        f"            const unsigned kg_bb[2] = {{kg_sb[kg_s][0][0][kg_bt], kg_sb[kg_s][0][4][kg_bt]}};\n"
        f"            const unsigned kg_bs[2] = {{kg_sb[kg_s][1][0][kg_bt], kg_sb[kg_s][1][4][kg_bt]}};\n"
        "            #pragma unroll\n            for (int kg_i = 0; kg_i < 4; ++kg_i) {\n"
        "                // the slice's sum starts at zero and joins the total in a rounded float add: the\n"
        "                // tensor core's own accumulation truncates, which over all of K drifts past 1e-4\n"
        "                float kg_part[4] = {0.0f, 0.0f, 0.0f, 0.0f};\n"
        "                kg_mma(kg_part, kg_as[kg_i], kg_bb);\n"
        "                kg_mma(kg_part, kg_ab[kg_i], kg_bs);\n"
        "                kg_mma(kg_part, kg_ab[kg_i], kg_bb);\n"
        "                #pragma unroll\n"
        "                for (int kg_c = 0; kg_c < 4; ++kg_c) kg_acc[kg_i][kg_j][kg_c] += kg_part[kg_c];\n"
        "            }\n"
        "        }\n"
        "        if (kg_more) kg_stage(kg_s ^ 1);\n"
        "        __syncthreads();\n"
        "        kg_s ^= 1;\n"
        "    }\n"
        "    #pragma unroll\n    for (int kg_i = 0; kg_i < 4; ++kg_i)\n"
        "        #pragma unroll\n        for (int kg_j = 0; kg_j < 4; ++kg_j)\n"
        "            #pragma unroll\n            for (int kg_c = 0; kg_c < 4; ++kg_c) {\n"
        "                const int64_t m = kg_m0 + kg_wm + kg_i * 16 + kg_g + (kg_c / 2) * 8;\n"
        "                const int64_t j = kg_j0 + kg_wn + kg_j * 8 + 2 * kg_t + kg_c % 2;\n"
        "                if (m >= M || j >= N) continue;\n"
        "                const float result = kg_acc[kg_i][kg_j][kg_c];\n"
        f"{store}"
        "            }\n"
    )


ATOL = RTOL = 1e-4


@dataclass
class Case:
    name: str
    product: Product
    store: str
    inputs: Callable[[], list[torch.Tensor]]
    reference: Callable[..., torch.Tensor]
    out_shape: tuple[int, ...]


def _matmul(name: str, batch: int, m: int, k: int, n: int, b_batched: bool) -> Case:
    a_at = f"p_a[bt * {m * k} + m * {k} + k]"
    b_at = f"p_b[{f'bt * {k * n} + ' if b_batched else ''}k * {n} + j]"
    product = Product(m, n, k, batch, a_at, b_at, a_m_fast=False, b_j_fast=True)
    b_shape = (batch, k, n) if b_batched else (k, n)
    return Case(
        name,
        product,
        "                p_out[(bt * M + m) * N + j] = result;\n",
        lambda: [torch.randn(batch, m, k, device="cuda"), torch.randn(*b_shape, device="cuda")],
        torch.matmul,
        (batch, m, n),
    )


def _linear(name: str, rows: int, k: int, n: int) -> Case:
    product = Product(rows, n, k, 1, f"p_a[m * {k} + k]", f"p_b[j * {k} + k]", a_m_fast=False, b_j_fast=False)
    return Case(
        name,
        product,
        "                p_out[m * N + j] = result;\n",
        lambda: [torch.randn(rows, k, device="cuda"), torch.randn(n, k, device="cuda") / k**0.5],
        F.linear,
        (rows, n),
    )


def _nchw_store(positions: int) -> str:
    """A convolution's store: output position m of batch kg_b, channel j, in NCHW."""
    return (
        f"                {{ const int64_t kg_b = m / {positions}, kg_p = m % {positions};\n"
        f"                  p_out[(kg_b * N + j) * {positions} + kg_p] = result; }}\n"
    )


def _conv2d(name: str, batch: int, c_in: int, c_out: int, side: int, taps: int, pad: int) -> Case:
    out_side = side + 2 * pad - taps + 1
    positions = out_side * out_side
    index = (
        f"              const int64_t kg_b = m / {positions}, kg_p = m % {positions};\n"
        f"              const int64_t q0 = kg_p / {out_side} - {pad} + (k % {taps * taps}) / {taps};\n"
        f"              const int64_t q1 = kg_p % {out_side} - {pad} + k % {taps};\n"
        f"              const int64_t c = k / {taps * taps};\n"
    )
    a_at = (
        f"((q0 >= 0 && q0 < {side} && q1 >= 0 && q1 < {side}) ? "
        f"p_x[((kg_b * {c_in} + c) * {side} + q0) * {side} + q1] : 0.0f)"
    )
    k_dim = c_in * taps * taps
    product = Product(
        batch * positions, c_out, k_dim, 1, a_at, f"p_w[j * {k_dim} + k]", True, False, a_index=index
    )
    return Case(
        name,
        product,
        _nchw_store(positions),
        lambda: [
            torch.randn(batch, c_in, side, side, device="cuda"),
            torch.randn(c_out, c_in, taps, taps, device="cuda") / k_dim**0.5,
        ],
        lambda x, w: F.conv2d(x, w, padding=pad),
        (batch, c_out, out_side, out_side),
    )


def _conv_transpose2d(
    name: str, batch: int, c_in: int, c_out: int, side: int, taps: int, stride: int
) -> Case:
    pad = 1
    out_side = (side - 1) * stride - 2 * pad + taps
    positions = out_side * out_side
    index = (
        f"              const int64_t kg_b = m / {positions}, kg_p = m % {positions};\n"
        f"              const int64_t q0 = kg_p / {out_side} + {pad} - (k % {taps * taps}) / {taps};\n"
        f"              const int64_t q1 = kg_p % {out_side} + {pad} - k % {taps};\n"
        f"              const int64_t c = k / {taps * taps};\n"
    )
    inside = " && ".join(f"q{d} >= 0 && q{d} % {stride} == 0 && q{d} / {stride} < {side}" for d in (0, 1))
    a_at = (
        f"(({inside}) ? p_x[((kg_b * {c_in} + c) * {side} + q0 / {stride}) * {side} + q1 / {stride}] : 0.0f)"
    )
    k_dim = c_in * taps * taps
    b_index = f"              const int64_t kg_c = k / {taps * taps}, kg_tap = k % {taps * taps};\n"
    b_at = f"p_w[(kg_c * {c_out} + j) * {taps * taps} + kg_tap]"
    product = Product(
        batch * positions, c_out, k_dim, 1, a_at, b_at, True, False, a_index=index, b_index=b_index
    )
    return Case(
        name,
        product,
        _nchw_store(positions),
        lambda: [
            torch.randn(batch, c_in, side, side, device="cuda"),
            torch.randn(c_in, c_out, taps, taps, device="cuda") / k_dim**0.5,
        ],
        lambda x, w: F.conv_transpose2d(x, w, stride=stride, padding=pad),
        (batch, c_out, out_side, out_side),
    )


CASES = (
    lambda: _matmul("square_4096", 1, 4096, 4096, 4096, False),
    lambda: _matmul("irregular_1000x3000x2000", 1, 1000, 3000, 2000, False),
    lambda: _matmul("batched_64x512x1024x256", 64, 512, 1024, 256, True),
    lambda: _matmul("long_k_256x8192x256", 1, 256, 8192, 256, False),
    lambda: _linear("linear_1024x8192x8192", 1024, 8192, 8192),
    lambda: _linear("linear_512x2048x4096", 512, 2048, 4096),
    lambda: _conv2d("conv_64x64x128_64px_k3", 64, 64, 128, 64, 3, 0),
    lambda: _conv2d("conv_32x32x64_128px_k3p1", 32, 32, 64, 128, 3, 1),
    lambda: _conv2d("conv_64x3x16_64px_k3", 64, 3, 16, 64, 3, 0),
    lambda: _conv_transpose2d("conv_t_32x64x64_64px_k3s2", 32, 64, 64, 64, 3, 2),
    lambda: _conv_transpose2d("conv_t_32x64x64_128px_k3s1", 32, 64, 64, 128, 3, 1),
)


def source(case: Case, min_blocks: int = 1) -> str:
    names = ["a", "b"] if case.name.startswith(("square", "irreg", "batch", "long", "linear")) else ["x", "w"]
    args = ", ".join(f"const float* __restrict__ p_{n}" for n in names)
    return (
        PRELUDE
        + MMA_HELPERS
        + f'extern "C" __global__ void __launch_bounds__({THREADS}, {min_blocks}) kg_tile({args}, '
        "float* __restrict__ p_out, int64_t n) {\n" + tile_loop(case.product, case.store) + "}\n"
    )


def _time(fn: Callable[[], object], trials: int) -> float:
    flush = torch.empty(64 << 20, dtype=torch.uint8, device="cuda")
    for _ in range(3):
        fn()
    times = []
    for _ in range(trials):
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def measure(case: Case, trials: int, min_blocks: int) -> dict:
    torch.manual_seed(0)
    inputs = case.inputs()
    count = 1
    for d in case.out_shape:
        count *= d
    kernel = RegionKernel(
        source(case, min_blocks),
        "kg_tile",
        len(inputs),
        0,
        case.out_shape,
        count,
        [THREADS, 1, 1],
        grid(case.product),
    )
    got = kernel(*inputs)
    want = case.reference(*inputs)
    exact = case.reference(*(t.double() for t in inputs))
    row = {
        "case": case.name,
        "blocks_per_sm": min_blocks,
        "strict_vs_torch": bool(torch.allclose(got, want, atol=ATOL, rtol=RTOL)),
        "max_err_vs_float64": float((got.double() - exact).abs().max()),
        "torch_max_err_vs_float64": float((want.double() - exact).abs().max()),
        "max_abs_diff_vs_torch": float((got - want).abs().max()),
    }
    row["tile_ms"] = _time(lambda: kernel(*inputs), trials)
    row["torch_ms"] = _time(lambda: case.reference(*inputs), trials)
    row["speedup"] = row["torch_ms"] / row["tile_ms"]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--trials", type=int, default=30)
    parser.add_argument("--only", default="", help="the cases to run, comma-separated (default: all)")
    parser.add_argument("--blocks-per-sm", default="1", help="launch bounds' minimum blocks, comma-separated")
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    rows = []
    for make in CASES:
        case = make()
        if args.only and case.name not in args.only.split(","):
            continue
        for min_blocks in (int(b) for b in args.blocks_per_sm.split(",")):
            try:
                row = measure(case, args.trials, min_blocks)
            except Exception as error:  # a case that fails to build or launch is reported, the rest run
                row = {"case": case.name, "error": f"{type(error).__name__}: {error}"[:2000]}
            print(json.dumps(row), flush=True)
            rows.append(row)
    result = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": rows}
    with open(args.out, "w") as handle:
        json.dump(result, handle, indent=1)


if __name__ == "__main__":
    main()
