"""The project's own tasks per op family, in KernelBench's `levelN/ID_Name.py` layout: windows (pooling),
scans, index reductions, norms, losses, attention, transposed / grouped / depthwise / dilated convolutions,
einsum and products of other layouts, layout ops, fused level-2 chains, and networks (some hard to capture:
a recurrent layer, data-dependent control flow, a mask sized from the input). Original, small problems
for tests and benchmarks (`python -m benchmarks.coverage`); KernelBench's own problems beyond the shared
ones are never used for this.
"""

from pathlib import Path

FAMILIES_DIR = Path(__file__).resolve().parent
