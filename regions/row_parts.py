"""Rows shared by several blocks, for reductions whose rows are few and long (Inductor's split reduction,
in one launch). A training-mode batch norm's statistics reduce 64 channels of 501,760 elements in level 3's
ResNet block: a block a row runs 64 blocks on an H100's 132 SMs, and the statistics took most of the
candidate's time (the block at 0.58x eager, its custom kernels 72% of its GPU time).

Here PARTS blocks share each row, every thread a strided share of it; each block combines its threads'
results in shared memory as the one-block shapes do, publishes its partial in the module's scratch
(`__device__` memory, zero at load), and the row's last block to publish (a counter per row, atomically
counted after a fence) gathers the row's partials in block order, combines them the same way and finishes
the row. The last block sets the row's counter back to zero, so the next launch finds it ready; two
launches of one kernel at once on different streams would share the scratch (the evaluator runs one).
"""

from __future__ import annotations

from dataclasses import dataclass

from regions.model import RegionError

FEW_ROWS = 264  # fewer rows than this (two blocks an SM of an H100 or H200) leave the GPU idle
PARTS_TARGET = 1056  # blocks a split aims for: eight blocks of 256 threads an SM
MIN_SHARE = 64  # the least elements a thread of a shared row reduces


def parts_of(rows: int, length: int, threads: int) -> int:
    """Blocks per row: 1 where the rows alone fill the GPU or are too short to share, else enough for
    PARTS_TARGET blocks while each thread keeps MIN_SHARE elements, and at most `threads` (the last block
    gathers one partial a thread)."""
    if rows >= FEW_ROWS:
        return 1
    return max(1, min(-(-PARTS_TARGET // rows), length // (threads * MIN_SHARE), threads))


@dataclass(frozen=True)
class Partial:
    """One value each block computes per row: its shared-memory array (the block's threads' values,
    combined into element 0), how two values combine (C, of a and b) and the combine's identity."""

    array: str
    combine: str
    identity: str


@dataclass(frozen=True)
class RowBlocks:
    """How a row reduction's blocks cover its rows: `parts` blocks of `threads` threads a row."""

    parts: int
    threads: int

    @property
    def shared(self) -> bool:
        return self.parts > 1

    @property
    def thread(self) -> str:
        """This thread's place among its row's threads, as the kernel names it."""
        return "kg_g" if self.shared else "kg_t"

    @property
    def stride(self) -> int:
        """All of a row's threads: a thread's share of the row steps by this."""
        return self.parts * self.threads

    def index(self) -> str:
        """The kernel's first lines: row i and this thread kg_t (and, on shared rows, the row's part kg_p
        and this thread's place kg_g among the row's threads)."""
        if not self.shared:
            return (
                "    const int64_t i = blockIdx.x, kg_t = threadIdx.x;  // row i; this thread's share of it\n"
            )
        return (
            "    const int64_t i = blockIdx.y, kg_p = blockIdx.x, kg_t = threadIdx.x;  "
            "// row i, its part kg_p\n"
            f"    const int64_t kg_g = kg_p * {self.threads} + kg_t;  // this thread among the row's "
            f"{self.stride}\n"
        )

    def grid(self, rows: int) -> list[int]:
        return [self.parts, rows, 1] if self.shared else [rows, 1, 1]


def row_blocks(rid: str, rows: int, length: int, threads: int, shared: bool) -> RowBlocks:
    """A block a row, or (`shared`) parts_of blocks a row; RegionError where sharing is asked of rows that
    need no more than a block each."""
    if not shared:
        return RowBlocks(1, threads)
    parts = parts_of(rows, length, threads)
    if parts < 2:
        raise RegionError(f"{rid}: {rows} rows of {length} elements need no more than a block a row")
    return RowBlocks(parts, threads)


def scratch(rid: str, rows: int, parts: int, ctype: str, values: int) -> str:
    """The module's scratch (before the kernel): every block's partials, and each row's count of blocks
    that have published."""
    return (
        f"// the framework's scratch: each block's partial results, and how many of a row's {parts} blocks "
        "have published them\n"
        f"__device__ {ctype} kg_parts_{rid}[{rows * parts * values}];\n"
        f"__device__ unsigned int kg_done_{rid}[{rows}];\n"
    )


def tree(partials: list[Partial], ctype: str, threads: int) -> str:
    """Each partial's array combined into its element 0, in a fixed order (a tree over the block)."""
    pad = "            " if len(partials) == 1 else "                "
    steps = [
        f"{pad}const {ctype} a = {p.array}[kg_t], b = {p.array}[kg_t + kg_s];\n"
        f"{pad}{p.array}[kg_t] = {p.combine};\n"
        for p in partials
    ]
    if len(partials) > 1:  # each in its own scope: a and b name each partial's pair
        steps = [f"            {{\n{step}            }}\n" for step in steps]
    return (
        f"    for (int kg_s = {threads // 2}; kg_s > 0; kg_s >>= 1) {{\n"
        f"        if (kg_t < kg_s) {{\n{''.join(steps)}        }}\n        __syncthreads();\n    }}\n"
    )


def gathered(rid: str, parts: int, ctype: str, partials: list[Partial], threads: int) -> str:
    """After a block's tree: the block publishes its partials; the row's last block to publish gathers
    all of them (one a thread, in block order) and combines them, the others leave. Every thread runs it,
    `i` is the row and `kg_p` this block's part of it."""
    n = len(partials)
    at = f"(i * {parts} + kg_p) * {n}"
    publish = "".join(f"        kg_parts_{rid}[{at} + {v}] = {p.array}[0];\n" for v, p in enumerate(partials))
    load = "".join(
        f"    {p.array}[kg_t] = kg_t < {parts} ? __ldcg(&kg_parts_{rid}[(i * {parts} + kg_t) * {n} + {v}]) "
        f": {p.identity};\n"
        for v, p in enumerate(partials)
    )
    return (
        "    __shared__ bool kg_last;  // whether this block is its row's last to publish\n"
        f"    if (kg_t == 0) {{\n{publish}"
        "        __threadfence();  // the partials are visible before the count says so\n"
        f"        kg_last = atomicAdd(&kg_done_{rid}[i], 1u) == {parts - 1}u;\n    }}\n"
        "    __syncthreads();\n    if (!kg_last) return;\n    __threadfence();\n"
        + load
        + f"    if (kg_t == 0) kg_done_{rid}[i] = 0u;  // the row's count, ready for the next launch\n"
        "    __syncthreads();\n" + tree(partials, ctype, threads)
    )
