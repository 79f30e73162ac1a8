"""What a region kernel's call costs the host, against the ATen op it replaces.

A model whose kernels are small (a network at a small batch) is bound by the host: the GPU waits for each
launch. There a region kernel is only as fast as its launcher (evaluator.regions.launch: its C launcher,
or ctypes marshalling the arguments where none builds; then the driver's launch) plus the evaluator's call
counter around it (evaluator.buildcache.ExtensionProxy, present in every judged candidate). Two measures,
each launcher against torch.relu:
- throughput: a tensor small enough that the GPU never holds the host back, many calls back to back, one
  synchronisation at the end, microseconds per call, the median of several repeats;
- latency: one call as the evaluator times a candidate (a synchronised device, CUDA events around the
  call), on tensors from 2^10 to 2^24 elements: where the host's cost shows in a judged speedup.

    python -m benchmarks.launch_overhead --out benchmarks/results/launch_overhead.json   # a GPU host
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

PROBLEM = """import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)

def get_inputs():
    return [torch.randn({size})]

def get_init_inputs():
    return []
"""
CALLS, REPEATS = 2000, 7


def per_call_us(fn: Callable[[Any], Any], x: Any) -> float:
    """Median over REPEATS of the host's microseconds per call, CALLS calls between synchronisations."""
    import torch

    for _ in range(100):
        fn(x)
    torch.cuda.synchronize()
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        for _ in range(CALLS):
            fn(x)
        torch.cuda.synchronize()
        times.append((time.perf_counter() - start) / CALLS * 1e6)
    return statistics.median(times)


def measure() -> dict[str, Any]:
    import torch

    from evaluator.buildcache import BuildRecorder, ExtensionProxy

    x = torch.randn(1024, device="cuda")
    rows: dict[str, float] = {"torch.relu (ATen)": per_call_us(torch.relu, x)}
    for name, contract, body in _contracts(x.numel()):
        for launcher in LAUNCHERS:
            kernel = _kernel(contract, body, launcher)
            if not torch.equal(kernel(x), torch.relu(x)):
                raise RuntimeError(f"the {name} kernel does not compute relu")
            label = f"region kernel, {name}, {launcher}"
            rows[label] = per_call_us(kernel, x)
            proxy = ExtensionProxy(types.SimpleNamespace(launch=kernel), BuildRecorder())
            rows[f"{label}, through the evaluator's call counter"] = per_call_us(proxy.launch, x)
    return {
        "gpu": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "what": f"host microseconds per call, {CALLS} calls of a 1024-element relu, median of {REPEATS}",
        "us_per_call": {k: round(v, 2) for k, v in rows.items()},
        "latency_what": (
            "microseconds per call as the evaluator times a candidate (evaluator.timing.Timer: L2 flushed "
            "and the device synchronised before each call, CUDA events around it), relu on SIZE elements, "
            "each through the evaluator's call counter, interleaved trials"
        ),
        "latency_us": {str(size): per_call_latency_us(size) for size in LATENCY_SIZES},
    }


LAUNCHERS = ("c launcher", "ctypes")
LATENCY_SIZES = (1 << 10, 1 << 18, 1 << 24)


def _contracts(size: int) -> list[tuple[str, Any, str]]:
    """The relu region over `size` elements on its first contract and on the vector shape, with the rules'
    body: (shape name, contract, body)."""
    from regions.offering import offered
    from regions.rules import rule_body
    from regions.shapes import shaped

    ((region, first),), _ = offered(PROBLEM.format(size=size), "moderate")
    body = rule_body(region, first)
    return [("first contract", first, body), ("vector4", shaped(region, "vector4"), body)]


def _kernel(contract: Any, body: str, launcher: str) -> Any:
    """The region kernel of `contract` with `body`, launched through `launcher`."""
    from evaluator.regions.launch import RegionKernel

    info = contract.launch
    return RegionKernel(
        contract.assemble(body),
        contract.kernel_name,
        1,
        0,
        info["output_shape"],
        info["count"],
        info.get("block"),
        info.get("grid"),
        c_launcher=launcher == "c launcher",
    )


def per_call_latency_us(size: int) -> dict[str, float]:
    """Median microseconds of one call after a synchronised device, as the evaluator times a candidate:
    the vector-shaped relu kernel through each launcher against torch.relu."""
    import torch

    from evaluator.buildcache import BuildRecorder, ExtensionProxy
    from evaluator.config import EvalConfig
    from evaluator.timing import Timer

    _, contract, body = _contracts(size)[1]
    device = torch.device("cuda")
    fns: dict[str, Callable[[Any], Any]] = {"torch.relu (ATen)": lambda args: torch.relu(args[0])}
    for launcher in LAUNCHERS:
        kernel = _kernel(contract, body, launcher)
        proxy = ExtensionProxy(types.SimpleNamespace(launch=kernel), BuildRecorder())
        fns[launcher] = lambda args, launch=proxy.launch: launch(args[0])
    x = torch.randn(size, device=device)
    for label, fn in fns.items():
        if not torch.equal(fn([x]), torch.relu(x)):
            raise RuntimeError(f"{label} does not compute relu on {size} elements")
    timer = Timer(device, EvalConfig().l2_flush_bytes)
    times = timer.measure_many(list(fns.values()), lambda i: [torch.randn(size, device=device)], 5, 100)
    return {label: round(t["event_ms"] * 1e3, 2) for label, t in zip(fns, times, strict=True)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    result = measure()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
