"""The region kind's launcher: a region kernel compiled by NVRTC, loaded by the CUDA driver, launched
on torch's current stream through a small C launcher (evaluator.regions.native), or ctypes where the
machine cannot build one.

No torch extension build (about 50 s of nvcc and a C++ link per candidate): NVRTC compiles a region kernel
in tens of milliseconds and the driver loads its cubin at once. `torch.cuda._compile_kernel` would do
the same, but it passes Python ints as 32-bit and floats as double, and the framework's signature takes
float32 scalars and an int64 count; so the arguments are marshalled here, in the signature's own order:
input pointers, the output pointer, float scalars, the element count.

Only framework-written programs call this (regions.export with the nvrtc launcher); the model's
code is the kernel body, which runs on the GPU inside the evaluator's worker like any candidate.
"""

from __future__ import annotations

import ctypes
import functools
import os
import re
import warnings
from collections.abc import Sequence
from typing import Any

import torch

from evaluator.regions import native, nvrtc

THREADS = 256
MAX_BLOCKS = 1 << 20  # the kernels stride over the grid, so a capped grid still covers every element
CUDA_SUCCESS = 0


class RegionCompileError(RuntimeError):
    """NVRTC refused the kernel; the message is the compiler's log, as a build error would be."""


class RegionKernel:
    """One compiled region kernel; calling it with the region's tensors and scalars returns the output."""

    def __init__(
        self,
        source: str,
        kernel: str,
        n_inputs: int,
        n_scalars: int,
        output_shape: Sequence[int],
        count: int,
        block: Sequence[int] | None = None,
        grid: Sequence[int] | None = None,
        output_dtype: str = "float32",
        zero: bool = False,
        *,
        c_launcher: bool = True,
    ) -> None:
        """`c_launcher=False` launches through ctypes even where the C launcher builds (for comparison)."""
        self.kernel = kernel
        self.zero = zero  # the kernel adds into its output (a split sum's blocks): it starts at zero
        if output_dtype not in _OUTPUT_DTYPES:
            raise ValueError(f"{kernel}: a region kernel writes float32 or int64, not {output_dtype}")
        self.output_dtype = _OUTPUT_DTYPES[output_dtype]
        # one thread per element over a grid-stride loop, unless the shape fixes its blocks and grid
        self.block = tuple(int(d) for d in block) if block else (THREADS, 1, 1)
        self.grid = tuple(int(d) for d in grid) if grid else None
        self.n_inputs, self.n_scalars = n_inputs, n_scalars
        self.output_shape = tuple(int(d) for d in output_shape)
        self.count = int(count)
        self.compiled = nvrtc.compile_kernel(source, f"{kernel}.cu", arch=_arch())
        if not self.compiled.ok:
            raise RegionCompileError(f"NVRTC could not compile {kernel}:\n{self.compiled.log}")
        self._function: ctypes.c_void_p | None = None
        self._plans: dict[int, Any] = {}
        self._launcher: Any = None
        if torch.cuda.is_available():  # the build phase hides the GPU: compiling is all it checks
            _driver()
            self._launcher = _native() if c_launcher else None

    def __call__(self, *args: Any) -> torch.Tensor:
        if len(args) != self.n_inputs + self.n_scalars:
            raise TypeError(f"{self.kernel} takes {self.n_inputs} tensors and {self.n_scalars} scalars")
        tensors = [_operand(t, self.kernel, i) for i, t in enumerate(args[: self.n_inputs])]
        out = self._output(tensors)
        if self.count == 0:
            return out
        pointers = [t.data_ptr() for t in (*tensors, out)]
        scalars = [float(s) for s in args[self.n_inputs :]]
        index = out.get_device()
        if index == torch._C._cuda_getDevice():  # the common case: no device switch to undo
            self._launch(index, pointers, scalars)
        else:
            with torch.cuda.device(index):
                self._launch(index, pointers, scalars)
        return out

    def _output(self, tensors: list[torch.Tensor]) -> torch.Tensor:
        """A fresh contiguous output on the inputs' device, allocated from the first input: on an H100 host
        torch.empty_like cost 3.8 us, Tensor.new_empty 5.6, torch.empty(shape, dtype, device) 7.1."""
        if not tensors:
            fill = torch.zeros if self.zero else torch.empty
            device = torch.device("cuda", torch.cuda.current_device())
            return fill(self.output_shape, dtype=self.output_dtype, device=device)
        first = tensors[0]
        if self.zero:
            return first.new_zeros(self.output_shape, dtype=self.output_dtype)
        if first.dtype == self.output_dtype and first.shape == self.output_shape:
            return torch.empty_like(first, memory_format=torch.contiguous_format)
        return first.new_empty(self.output_shape, dtype=self.output_dtype)

    def _launch(self, index: int, pointers: list[int], scalars: list[float]) -> None:
        """The launch on torch's current stream of device `index` (its raw handle: a Stream object costs
        microseconds a call, which a launch-bound model pays once per kernel), through the C launcher
        where this machine could build it."""
        stream = torch._C._cuda_getCurrentRawStream(index)
        context = _context(index)
        plan = self._plans.get(index)
        if plan is None:
            plan = self._plans[index] = self._plan(index)
        if self._launcher is not None:
            result = self._launcher.launch(plan, context.value, stream, *pointers, *scalars, self.count)
            if result != CUDA_SUCCESS:
                _check(_driver(), result, f"launching {self.kernel}")
            return
        values: list[Any] = [ctypes.c_void_p(p) for p in pointers]
        values += [ctypes.c_float(s) for s in scalars]
        values.append(ctypes.c_int64(self.count))
        params = (ctypes.c_void_p * len(values))(*(ctypes.addressof(v) for v in values))
        driver = _driver()
        _check(driver, driver.cuCtxSetCurrent(context), "cuCtxSetCurrent")
        launch_args = (*plan, 0, ctypes.c_void_p(stream), ctypes.cast(params, ctypes.c_void_p), None)
        _check(driver, driver.cuLaunchKernel(*launch_args), f"launching {self.kernel}")

    def _plan(self, index: int) -> Any:
        """What every launch of this kernel on device `index` repeats: the function, grid and block (for
        the C launcher, packed with the argument layout)."""
        function = self._load(index)
        grid = self.grid or (min((self.count + THREADS - 1) // THREADS, MAX_BLOCKS), 1, 1)
        if self._launcher is not None:
            return self._launcher.plan(function.value, grid, self.block, self.n_inputs + 1, self.n_scalars)
        return (function, *grid, *self.block)

    def _load(self, index: int) -> ctypes.c_void_p:
        """The kernel's function handle, loaded once, in the device's primary context (torch's own)."""
        if self._function is None:
            driver = _driver()
            module = ctypes.c_void_p()
            image = self.compiled.cubin or self.compiled.ptx.encode() + b"\0"
            _check(driver, driver.cuModuleLoadData(ctypes.byref(module), image), "cuModuleLoadData")
            function = ctypes.c_void_p()
            _check(
                driver,
                driver.cuModuleGetFunction(ctypes.byref(function), module, self.kernel.encode()),
                f"finding {self.kernel} in the module",
            )
            self._function = function
        return self._function


def load_region_kernel(
    name: str,
    source: str,
    kernel: str,
    launch: str,
    n_inputs: int,
    n_scalars: int,
    output_shape: Sequence[int],
    count: int,
    block: Sequence[int] | None = None,
    grid: Sequence[int] | None = None,
    output_dtype: str = "float32",
    zero: bool = False,
) -> Any:
    """An extension-like object whose attribute `launch` runs the kernel: the evaluator's build cache
    wraps it as it wraps a load_inline module (counting calls, skip trials), whatever `name` it has."""
    module = type(name, (), {})()
    kernel_object = RegionKernel(
        source, kernel, n_inputs, n_scalars, output_shape, count, block, grid, output_dtype, zero
    )
    setattr(module, launch, kernel_object)
    return module


_OUTPUT_DTYPES = {"float32": torch.float32, "int64": torch.int64}  # values; an index reduction's indices


def _arch() -> str:
    """The device's own architecture; on a host without one (the build phase hides the GPU), the first
    of TORCH_CUDA_ARCH_LIST, which the evaluator sets for builds."""
    if torch.cuda.is_available():
        major, minor = torch.cuda.get_device_capability()
        return f"sm_{major}{minor}"
    found = re.match(r"\s*(\d+)\.(\d+)", os.environ.get("TORCH_CUDA_ARCH_LIST", ""))
    return f"sm_{found[1]}{found[2]}" if found else "sm_90"


def _operand(value: Any, kernel: str, index: int) -> torch.Tensor:
    """A float32 CUDA input as the kernel reads it: contiguous, starting on a 16-byte boundary (a view
    into a storage may start off one; the vector shape's float4 loads need one)."""
    if not isinstance(value, torch.Tensor) or not value.is_cuda or value.dtype != torch.float32:
        raise TypeError(f"{kernel}: input {index} must be a float32 CUDA tensor, got {value!r:.80}")
    value = value.contiguous()
    return value if value.data_ptr() % 16 == 0 else value.clone()


_DRIVER_FUNCTIONS = (
    "cuCtxGetCurrent",
    "cuCtxSetCurrent",
    "cuDeviceGet",
    "cuDevicePrimaryCtxRetain",
    "cuGetErrorString",
    "cuLaunchKernel",
    "cuModuleGetFunction",
    "cuModuleLoadData",
)


@functools.cache
def _driver() -> ctypes.CDLL:
    """libcuda with every function this module calls looked up now: while a candidate runs, the
    evaluator's sandbox refuses new dlopen/dlsym, so none may happen at launch time."""
    driver = ctypes.CDLL("libcuda.so.1")
    for name in _DRIVER_FUNCTIONS:
        getattr(driver, name)
    driver.cuLaunchKernel.argtypes = [
        ctypes.c_void_p,
        *([ctypes.c_uint] * 7),
        ctypes.c_void_p,
        ctypes.c_void_p,
        ctypes.c_void_p,
    ]
    driver.cuGetErrorString.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    return driver


@functools.cache
def _native() -> Any:
    """The C launcher bound to libcuda's entry points, or None where this machine cannot build it (a
    warning says why)."""
    try:
        module = native.load()
    except native.NativeUnavailable as exc:
        warnings.warn(f"region kernels launch through ctypes: {exc}", stacklevel=2)
        return None
    driver = _driver()
    module.bind(*(ctypes.cast(getattr(driver, f), ctypes.c_void_p).value for f in _NATIVE_ENTRY_POINTS))
    return module


_NATIVE_ENTRY_POINTS = ("cuLaunchKernel", "cuCtxGetCurrent", "cuCtxSetCurrent")


@functools.cache
def _context(index: int) -> ctypes.c_void_p:
    """The device's primary context, the one torch's runtime calls use (so pointers and streams match)."""
    torch.cuda.init()
    driver = _driver()
    device, context = ctypes.c_int(), ctypes.c_void_p()
    _check(driver, driver.cuDeviceGet(ctypes.byref(device), index), "cuDeviceGet")
    _check(driver, driver.cuDevicePrimaryCtxRetain(ctypes.byref(context), device), "cuDevicePrimaryCtxRetain")
    return context


def _check(driver: ctypes.CDLL, result: int, what: str) -> None:
    if result != CUDA_SUCCESS:
        text = ctypes.c_char_p()
        driver.cuGetErrorString(result, ctypes.byref(text))
        raise RuntimeError(f"{what} failed: CUDA error {result} ({(text.value or b'?').decode()})")
