"""A region's contract: what the model reads, and the kernel skeleton the framework owns around its body.

Skeletons follow the region's kind (the same probe contract scored 14/20 on the shared tasks and 4/10 on
others where it did not fit the kind):
- map: one thread per output element (grid-stride), the output index unravelled, every input loaded at
  that element's broadcast index before the body; the model writes one line per step, the framework
  stores the last step's value.
- reduce: one thread per output row; the reduced elements read through an accessor `x(k)`; the model
  writes the loop(s) and either `result` or `out(k)` (regions.reduce).
- window (pooling, plain and adaptive, max and average): one thread per output element, the window placed
  by the framework (regions.window); the model loops over it through `x(a, b)`, folding into `result`.
- contraction (matmul family and direct convolution): one thread per output element, operands through
  accessors `A(k)`, `B(k)` or `x(c, k...)`; the model writes the sum into `result`. Nothing is preloaded.
At aggressive ambition a product, window or reduction to one value also computes the pointwise steps
after it (regions.epilogue): one line per step after the core's value.
Shapes are baked into the kernel as constants (KernelBench's shapes are fixed), so the signature holds
only pointers, float32 scalars and the int64 element count. Each kind's skeleton lives in its module
(pointwise, reduce, window, contraction); the shared pieces in `skeleton`.
"""

from __future__ import annotations

from regions.contraction import CONV, MATMUL, conv_contract, fused_contract, matmul_contract
from regions.model import Region, RegionError
from regions.pointwise import map_contract
from regions.reduce import INDEX_OPS, REDUCE_OPS, reduce_contract
from regions.skeleton import BODY_MARK, Contract, c_names
from regions.window import WINDOW, window_contract

__all__ = ["BODY_MARK", "Contract", "render"]


def render(region: Region) -> Contract:
    """The contract of one region; RegionError when no skeleton fits it (e.g. convolutions, non-float32)."""
    indices = (
        region.kind == "reduce" and region.steps[-1].target in INDEX_OPS and region.output.dtype == "int64"
    )
    for t in [*region.inputs, *([] if indices else [region.output])]:
        if t.dtype != "float32":
            raise RegionError(f"{region.id}: only float32 tensors have contracts ({t.name} is {t.dtype})")
    names = c_names(region)
    if region.kind == "map":
        return map_contract(region, names)
    targets = {s.target for s in region.steps}
    first = region.steps[0].target  # a core op; the steps after it, a fused epilogue (maps)
    if region.kind == "reduce" and first in REDUCE_OPS:
        return reduce_contract(region, names)
    if region.kind == "window" and first in WINDOW:
        return window_contract(region, names)
    if region.kind == "contraction" and len(region.steps) == 1 and targets <= MATMUL:
        return matmul_contract(region, names)
    if region.kind == "contraction" and len(region.steps) == 1 and targets <= set(CONV):
        return conv_contract(region, names)
    if region.kind == "contraction" and region.steps[0].target in MATMUL | set(CONV):
        return fused_contract(region, names)
    raise RegionError(f"{region.id}: no contract for a {region.kind} region of {sorted(targets)} yet")
