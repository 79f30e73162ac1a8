"""The framework's device side: the prelude every region kernel starts with, and what each op means.

The prelude is prepended by the framework, never by the model (in the probe the model dropped the
`#define`s it was told to keep in 9 of 15 replies). The glossary says, per canonical op, what the op
computes and which helper or expression computes it in CUDA, so the model never has to recall PyTorch's
exact definitions (exact GELU, mish, softplus's threshold, ...).
"""

from __future__ import annotations

import re

_HEAD = r"""// ---- kernelgraph prelude: written by the framework ----
#ifdef __CUDACC_RTC__
typedef long long int64_t;  // NVRTC has no standard headers
#define INFINITY __int_as_float(0x7f800000)
#define FLT_MAX 3.402823466e+38f
namespace std {  // NVRTC has no <limits> either; bodies reach for it to start a max
template <class T> struct numeric_limits;
template <> struct numeric_limits<float> {
    __device__ static constexpr float max() { return 3.402823466e+38f; }
    __device__ static constexpr float lowest() { return -3.402823466e+38f; }
    __device__ static float infinity() { return __int_as_float(0x7f800000); }
};
}
#else
#include <cstdint>
#include <cfloat>
#include <cmath>
#include <limits>
#endif
__device__ __forceinline__ float kg_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
__device__ __forceinline__ float kg_softplus(float x) { return x > 20.0f ? x : log1pf(expf(x)); }
__device__ __forceinline__ float kg_mish(float x) { return x * tanhf(kg_softplus(x)); }
__device__ __forceinline__ float kg_gelu(float x) {
    return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
}
__device__ __forceinline__ float kg_gelu_tanh(float x) {
    return 0.5f * x * (1.0f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)));
}
__device__ __forceinline__ float kg_relu(float x) { return x > 0.0f ? x : 0.0f; }
__device__ __forceinline__ float kg_leaky_relu(float x, float slope) { return x > 0.0f ? x : x * slope; }
__device__ __forceinline__ float kg_clamp(float x, float lo, float hi) { return fminf(fmaxf(x, lo), hi); }
__device__ __forceinline__ float kg_hardtanh(float x, float lo, float hi) { return kg_clamp(x, lo, hi); }
__device__ __forceinline__ float kg_hardsigmoid(float x) { return kg_clamp(x / 6.0f + 0.5f, 0.0f, 1.0f); }
__device__ __forceinline__ float kg_hardswish(float x) { return x * kg_hardsigmoid(x); }
__device__ __forceinline__ float kg_silu(float x) { return x * kg_sigmoid(x); }
__device__ __forceinline__ float kg_elu(float x, float alpha) { return x > 0.0f ? x : alpha * expm1f(x); }
__device__ __forceinline__ float kg_selu(float x) {
    return 1.0507009873554805f * (x > 0.0f ? x : 1.6732632423543772f * expm1f(x));
}
"""

# The core-ATen pointwise ops and the C float functions under the kg_ names a model guesses from the
# PyTorch lines and the helpers above (measured in failed repairs: kg_rsqrt, kg_clamp_max, kg_mul, kg_sub,
# kg_minf, kg_sqrtf): each is defined, so a guess compiles and means what its name says.
_UNARY_C = {
    **{op: f"{op}f" for op in "exp log sqrt rsqrt tanh erf erfc exp2 expm1 log2 log10 log1p sin cos tan asin "
       "acos atan sinh cosh asinh acosh atanh floor ceil trunc".split()},
    "abs": "fabsf",
    "fabs": "fabsf",
    "round": "rintf",  # halves to the even neighbour, as PyTorch rounds
}
_OWN = {  # name -> (parameters, expression)
    "neg": ("x", "-x"),
    "reciprocal": ("x", "1.0f / x"),
    "square": ("x", "x * x"),
    "sign": ("x", "(float)((x > 0.0f) - (x < 0.0f))"),
    "add": ("a, b", "a + b"),
    "sub": ("a, b", "a - b"),
    "mul": ("a, b", "a * b"),
    "div": ("a, b", "a / b"),
    "pow": ("a, b", "powf(a, b)"),
    "clamp_min": ("x, lo", "fmaxf(x, lo)"),
    "clamp_max": ("x, hi", "fminf(x, hi)"),
    **{name: ("a, b", "fmaxf(a, b)") for name in ("max", "maximum", "fmax", "maxf", "fmaxf")},
    **{name: ("a, b", "fminf(a, b)") for name in ("min", "minimum", "fmin", "minf", "fminf")},
}


def _aliases() -> str:
    own = dict(_OWN)
    for op, c in _UNARY_C.items():
        for name in (op, c):
            own.setdefault(name, ("x", f"{c}(x)"))
    lines = []
    for name, (params, expr) in own.items():
        typed = ", ".join(f"float {p.strip()}" for p in params.split(","))
        lines.append(f"__device__ __forceinline__ float kg_{name}({typed}) {{ return {expr}; }}")
    return "\n".join(lines) + "\n"


PRELUDE = _HEAD + _aliases() + "// ---- end of prelude ----\n"

HELPERS: tuple[str, ...] = tuple(re.findall(r"__device__ __forceinline__ float (kg_\w+)\(", PRELUDE))

# canonical op -> what it computes, in CUDA terms the model can copy.
GLOSSARY: dict[str, str] = {
    "torch.add": "a + b elementwise (a broadcast operand is already loaded at this element's index)",
    "torch.sub": "a - b elementwise",
    "torch.mul": "a * b elementwise",
    "torch.div": "a / b elementwise (true division)",
    "torch.neg": "-a",
    "torch.pow": "powf(a, b); for b == 2 write a * a",
    "torch.exp": "expf(a)",
    "torch.log": "logf(a)",
    "torch.sqrt": "sqrtf(a)",
    "torch.rsqrt": "rsqrtf(a)",
    "torch.square": "a * a",
    "torch.abs": "fabsf(a)",
    "torch.tanh": "tanhf(a)",
    "torch.sigmoid": "kg_sigmoid(a) = 1 / (1 + exp(-a))",
    "torch.relu": "kg_relu(a) = max(a, 0)",
    "torch.clamp": "kg_clamp(a, min, max); a missing bound is no bound (use fmaxf or fminf alone)",
    "torch.minimum": "fminf(a, b)",
    "torch.maximum": "fmaxf(a, b)",
    "torch.exp2": "exp2f(a)",
    "torch.expm1": "expm1f(a)",
    "torch.log2": "log2f(a)",
    "torch.log10": "log10f(a)",
    "torch.log1p": "log1pf(a)",
    "torch.reciprocal": "1.0f / a",
    "torch.sin": "sinf(a)",
    "torch.cos": "cosf(a)",
    "torch.tan": "tanf(a)",
    "torch.asin": "asinf(a)",
    "torch.acos": "acosf(a)",
    "torch.atan": "atanf(a)",
    "torch.sinh": "sinhf(a)",
    "torch.cosh": "coshf(a)",
    "torch.asinh": "asinhf(a)",
    "torch.acosh": "acoshf(a)",
    "torch.atanh": "atanhf(a)",
    "torch.erf": "erff(a)",
    "torch.erfc": "erfcf(a)",
    "torch.floor": "floorf(a)",
    "torch.ceil": "ceilf(a)",
    "torch.trunc": "truncf(a)",
    "torch.round": "rintf(a): halves round to the even neighbour, as PyTorch does (roundf does not)",
    "torch.sign": "(a > 0) - (a < 0) as float: 1, -1 or 0",
    "torch.positive": "a",
    "torch.clamp_min": "fmaxf(a, min)",
    "torch.clamp_max": "fminf(a, max)",
    "torch.nn.functional.relu6": "kg_clamp(a, 0, 6)",
    "torch.nn.functional.celu": "a > 0 ? a : alpha * expm1f(a / alpha)",
    "torch.nn.functional.logsigmoid": "log(sigmoid(a)) = fminf(a, 0) - log1pf(expf(-fabsf(a))) (stable)",
    "torch.nn.functional.softsign": "a / (1 + fabsf(a))",
    "torch.nn.functional.tanhshrink": "a - tanhf(a)",
    "torch.nn.functional.threshold": "a > threshold ? a : value",
    "torch.nn.functional.leaky_relu": "kg_leaky_relu(a, negative_slope)",
    "torch.nn.functional.hardtanh": "kg_hardtanh(a, min_val, max_val)",
    "torch.nn.functional.gelu": "kg_gelu(a): exact GELU 0.5*a*(1+erf(a/sqrt(2))); approximate='tanh' is "
    "kg_gelu_tanh(a)",
    "torch.nn.functional.mish": "kg_mish(a) = a * tanh(softplus(a))",
    "torch.nn.functional.softplus": "kg_softplus(a) = log(1 + exp(a)) (a itself above 20)",
    "torch.nn.functional.silu": "kg_silu(a) = a * sigmoid(a)",
    "torch.nn.functional.hardswish": "kg_hardswish(a) = a * clamp(a/6 + 1/2, 0, 1)",
    "torch.nn.functional.hardsigmoid": "kg_hardsigmoid(a) = clamp(a/6 + 1/2, 0, 1)",
    "torch.nn.functional.elu": "kg_elu(a, alpha)",
    "torch.nn.functional.selu": "kg_selu(a)",
    "torch.selu": "kg_selu(a)",
    **{
        f"{ns}{kind}_pool{d}d": meaning
        for d in (1, 2, 3)
        for ns in ("torch.nn.functional.", "torch.")
        for kind, meaning in (
            ("max", "the largest value in the window (padding never wins: it reads as -INFINITY)"),
            ("avg", "the mean over the window: the body sums it into result, the framework divides it"),
            ("adaptive_max", "the largest value in this output's window (its size varies per output)"),
            (
                "adaptive_avg",
                "the mean over this output's window (its size varies per output): the body "
                "sums it into result, the framework divides it",
            ),
        )
    },
    "torch.sum": "the sum over the reduced elements",
    "torch.mean": "the sum over the reduced elements divided by their count R: the body folds the sum into "
    "result, the framework divides",
    "torch.amax": "the largest value over the reduced dim (start from -INFINITY)",
    "torch.max": "the largest value over the reduced dim (start from -INFINITY)",
    "torch.amin": "the smallest value over the reduced dim (start from INFINITY)",
    "torch.min": "the smallest value over the reduced dim (start from INFINITY)",
    "torch.argmax": "the index k of the largest x(k) (the first one on ties), an int64 that the framework "
    "stores: keep best and index",
    "torch.argmin": "the index k of the smallest x(k) (the first one on ties), an int64 that the framework "
    "stores: keep best and index",
    "torch.prod": "the product over the reduced dim (start from 1)",
    "torch.var": "the variance: the sum of (x(k) - row_mean)^2 divided by R minus the correction (the body "
    "folds the squares into result; the skeleton computes row_mean and divides)",
    "torch.std": "the square root of the variance (the body folds the squares (x(k) - row_mean)^2 into "
    "result; the skeleton computes row_mean, divides and takes the root)",
    "torch.logsumexp": "m + log(sum(exp(x(k) - m))) with m the largest x(k) (subtract it first)",
    "torch.softmax": "out(k) = expf(x(k) - row_max) / row_sum: the skeleton computes the row's largest value "
    "row_max and row_sum, the sum of expf(x(j) - row_max)",
    "torch.log_softmax": "out(k) = x(k) - row_max - logf(row_sum): the skeleton computes the row's largest "
    "value row_max and row_sum, the sum of expf(x(j) - row_max)",
    "torch.cumsum": "out(k) = x(0) + x(1) + ... + x(k): one pass over k in order, k from 0 up, keeping the "
    "running sum in carry",
    "torch.cumprod": "out(k) = x(0) * x(1) * ... * x(k): one pass over k in order, k from 0 up, keeping the "
    "running product in carry",
    "torch.nn.functional.layer_norm": "out(k) = (x(k) - row_mean) * row_rstd * weight(k) + bias(k) (weight "
    "and bias where the op has them): the skeleton computes row_mean and row_rstd = 1 / sqrt(biased "
    "variance + eps) over the normalized elements",
    "torch.matmul": "result = sum over k of A(k) * B(k) for this output element",
    "torch.addmm": "result = input + sum over k of A(k) * B(k) (times beta and alpha where given)",
    "torch.baddbmm": "result = input + sum over k of A(k) * B(k) for this batch (times beta and alpha)",
    **{
        f"torch.nn.functional.conv{kind}{d}d": meaning
        for d in (1, 2, 3)
        for kind, meaning in (
            ("", "result = sum over c and the taps k of x(c, k) * w(c, k), plus bias[o] if there is a bias"),
            (
                "_transpose",
                "result = sum over c and the taps k of x(c, k) * w(c, k) (x reads the input that tap k "
                "carries onto this output, 0 where none does), plus bias[o] if there is a bias",
            ),
        )
    },
    "torch.mm": "result = sum over k of A(k) * B(k) for this output element",
    "torch.bmm": "result = sum over k of A(k) * B(k) for this output element (same batch)",
    "torch.nn.functional.linear": "result = sum over k of x(k) * weight(k), plus bias[j] if there is a bias",
}
