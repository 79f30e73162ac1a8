"""What a region kernel's call costs the host, against the ATen op it replaces.

A model whose kernels are small (a network at a small batch) is bound by the host: the GPU waits for each
launch. There a region kernel is only as fast as its launcher (evaluator.regions.launch: marshalling the
arguments through ctypes, the driver's launch) plus the evaluator's call counter around it
(evaluator.buildcache.ExtensionProxy, present in every judged candidate). Each is timed on a tensor small
enough that the GPU never holds the host back: many calls back to back, one synchronisation at the end,
microseconds per call, the median of several repeats, against torch.relu on the same tensor.

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
    return [torch.randn(1024)]

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
    from evaluator.regions.launch import RegionKernel
    from regions.offering import offered
    from regions.rules import rule_body
    from regions.shapes import shaped

    ((region, first),), _ = offered(PROBLEM, "moderate")
    body = rule_body(region, first)
    x = torch.randn(1024, device="cuda")
    rows: dict[str, float] = {"torch.relu (ATen)": per_call_us(torch.relu, x)}
    for name, contract in (("first contract", first), ("vector4", shaped(region, "vector4"))):
        info = contract.launch
        kernel = RegionKernel(
            contract.assemble(body),
            contract.kernel_name,
            1,
            0,
            info["output_shape"],
            info["count"],
            info.get("block"),
            info.get("grid"),
        )
        if not torch.equal(kernel(x), torch.relu(x)):
            raise RuntimeError(f"the {name} kernel does not compute relu")
        rows[f"region kernel, {name}"] = per_call_us(kernel, x)
        proxy = ExtensionProxy(types.SimpleNamespace(launch=kernel), BuildRecorder())
        rows[f"region kernel, {name}, through the evaluator's call counter"] = per_call_us(proxy.launch, x)
    return {
        "gpu": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "what": f"host microseconds per call, {CALLS} calls of a 1024-element relu, median of {REPEATS}",
        "us_per_call": {k: round(v, 2) for k, v in rows.items()},
    }


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
