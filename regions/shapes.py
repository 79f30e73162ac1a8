"""Launch shapes beyond one thread per output element, for the fast second: the framework's menu.

Every first contract runs one thread per output element (or output row) over a grid-stride loop. A shape
is another way to launch the same body, written by the framework; the model chooses among the shapes that
fit its region (nodes.shape_choice) and never writes launch code. Each shape keeps the first contract's
names, so a correct body moves to it unchanged (no model call) where it only reads through the accessors
and the loaded values:

- tiled, blocked, split and dot (a lone matmul-family product, regions.tiles and regions.blocked_tiles):
  shared-memory tiles; register blocking on top; that with K split over several blocks per output tile,
  for small outputs of long sums; a block per output element, for outputs a few columns wide.
- blocked_fused (a matmul-family product fused with its epilogue, regions.blocked_tiles): the blocked staging
  with the sum the framework's, then the body's epilogue steps once per output.
- conv_blocked (a convolution of at least 32 output channels a group, alone or fused with its epilogue,
  regions.conv_tiles): the convolution as a register-blocked implicit product, staged a few whole input
  channels (every tap) at a time, so the first contract's sum over c and the taps runs on each slice.
- vector4 (a map whose element count is a multiple of 4): each thread computes four consecutive elements;
  inputs of the output's shape arrive in one 16-byte load, broadcast ones are loaded per element, the body
  runs once per element, and the four results leave in one 16-byte store.
- block_row (a reduce to `result`: sum, mean, max, min, product, logsumexp, variance, standard deviation,
  over rows of at least one block): one block of ROW_THREADS threads per output row; each thread runs the
  body over its own strided share of the row (R is its share's length, x(k) its k-th element) and the
  framework combines the partial results in shared memory with the op's own rule (a logsumexp's share
  shifted by its own max; a variance's squares taken about the whole row's mean, which the block computes
  first) (regions.block_row).
- block_index (an argmax or argmin over rows of at least one block): the same, with (value, index) pairs
  (regions.block_index).
- block_fold (a fused reduction: the fold is the framework's, the body the steps after it): one block per
  row folds it, thread 0 runs the body on the finished value (regions.block_fold).
- each_row (a softmax, log_softmax or layer norm over contiguous elements): a warp or a block per row
  shares the statistics and the loop over k (regions.each_row).
- block_scan (a cumsum or cumprod over long rows): a block a row in contiguous chunks, the body run twice
  (for the chunk's total, then from its carry) (regions.block_scan).
- split_row and split_fold (those two where rows are too few to fill the GPU): each row shared by several
  blocks, whose results the row's last block combines (regions.row_parts, regions.block_row).
Matmul-family products with a bias and no epilogue, convolutions of few channels a group, row-wise
reductions over strided elements, short scans and maps of other sizes have no other shape yet.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from regions.block_fold import ROW_THREADS, block_fold, split_fold
from regions.block_index import block_index
from regions.block_row import block_rows, split_rows
from regions.block_scan import block_scan
from regions.blocked_tiles import blocked, blocked_fused, split
from regions.check import check
from regions.contraction import CONV
from regions.conv_cut import SIDE_N, THREADS
from regions.conv_tiles import conv_blocked
from regions.each_row import BLOCK, WIDE, each_row
from regions.library import PRELUDE
from regions.model import Region, RegionError
from regions.pointwise import preloaded
from regions.reduce import SCAN, SPREAD
from regions.skeleton import (
    BODY_MARK,
    Contract,
    c_names,
    facts_text,
    launch_info,
    role_lines,
    signature_line,
    step_code,
)
from regions.tiles import DOT_THREADS, TILE, blocks, dot, tiled

VECTOR = 4
MAX_BLOCKS = 1 << 20  # the vector shape strides over its grid, as the first contracts do
FIRST = "first"  # the first contract's shape: one thread per output element or row
FIRST_LAUNCH = "one thread per output element or row"  # the first contract's launch, in words
TILED, BLOCKED, SPLIT, DOT, CONV_BLOCKED = "tiled", "blocked", "split", "dot", "conv_blocked"
BLOCKED_FUSED = "blocked_fused"
VECTOR4, BLOCK_ROW, BLOCK_FOLD = "vector4", "block_row", "block_fold"
SPLIT_ROW, SPLIT_FOLD, EACH_ROW, BLOCK_SCAN = "split_row", "split_fold", "each_row", "block_scan"
BLOCK_INDEX = "block_index"
_MEMORY = re.compile(r"\bp_\w+")  # the kernel's pointers: p_out, p_A, ...


@dataclass(frozen=True)
class Shape:
    """One launch shape of the menu: its name, what the model reads of it, and the contract it builds."""

    name: str
    kind: str  # the region kind it serves
    what: str  # one line for the model's menu
    build: Callable[[Region], Contract]  # RegionError where the shape does not fit the region


def moves_unchanged(body: str) -> bool:
    """Whether a first contract's body can run on another shape unchanged: only if it reads through the
    accessors and loaded values and sets its result. A body that also touches memory itself
    (`p_out[m * N + j] = result;`, harmless once per element) would do so once per slice or lane, and
    from idle threads too."""
    return _MEMORY.search(body) is None


def vectorised(region: Region) -> Contract:
    """The map on four consecutive elements per thread, 16-byte loads and stores; RegionError where the
    element count is not a multiple of 4."""
    out = region.output
    if region.kind != "map":
        raise RegionError(f"{region.id}: only a map region has the vector4 shape")
    if out.numel % VECTOR:
        raise RegionError(f"{region.id}: {out.numel} elements are not a multiple of {VECTOR}")
    names = c_names(region)
    kernel = f"region_{region.id}"
    pointers = [names[t.name] for t in region.inputs]
    sig = signature_line(kernel, pointers, "out", [names[s] for s, _ in region.scalars], ["n"])
    whole = [t for t in region.inputs if tuple(t.shape) == tuple(out.shape)]
    spread = [t for t in region.inputs if t not in whole]
    dims, loads = preloaded(spread, out.shape, names, "    ")
    vectors = "".join(_vector_load(names[t.name]) for t in whole)
    lanes = "".join(f"        const float {names[t.name]} = kg_l_{names[t.name]}[kg_lane];\n" for t in whole)
    last = f"t{len(region.steps)}"
    todo = "\n".join(f"        // {step_code(s, names)}" for s in region.steps)
    head = (
        f"{PRELUDE}\n{sig} {{\n{dims}    const int64_t kg_n4 = n / {VECTOR};  // four elements per thread\n"
        "    for (int64_t kg_q = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; kg_q < kg_n4;\n"
        "         kg_q += (int64_t)gridDim.x * blockDim.x) {\n"
        f"{vectors}        float kg_outs[4];\n"
        "        #pragma unroll\n"
        "        for (int kg_lane = 0; kg_lane < 4; ++kg_lane) {\n"
        f"        const int64_t i = {VECTOR} * kg_q + kg_lane;  // this lane's element\n"
        f"{lanes}{loads}"
        f"        // one line per step, in order:\n{todo}\n{BODY_MARK}"
    )
    tail = (
        f"        kg_outs[kg_lane] = {last};\n        }}\n"
        "        reinterpret_cast<float4*>(p_out)[kg_q] = make_float4(kg_outs[0], kg_outs[1], kg_outs[2], "
        "kg_outs[3]);\n    }\n}\n"
    )
    roles = role_lines(
        region, names, {t.name: " (loaded at this element: use the value)" for t in region.inputs}
    )
    lines = "`float t1 = ...;`" + (f" to `float {last} = ...;`, one line per step" if last != "t1" else "")
    roles.insert(
        0,
        f"- each thread computes four consecutive elements of out (shape {list(out.shape)}), your lines "
        f"run once per element i; write {lines}",
    )
    launch = launch_info(region, kernel, out.numel)
    launch |= {
        "block": [ROW_THREADS, 1, 1],
        "grid": [min(blocks(out.numel // VECTOR, ROW_THREADS), MAX_BLOCKS), 1, 1],
    }
    contract = Contract(region.id, "map", kernel, sig, head, tail, "", launch)
    contract.facts = facts_text(region, names, head, roles)
    return contract


SHAPES: tuple[Shape, ...] = (
    Shape(
        TILED,
        "contraction",
        f"2-D blocks of {TILE} x {TILE} threads; tiles of both operands staged in shared memory, so each "
        f"value is read from global memory once per tile instead of once per output element",
        tiled,
    ),
    Shape(
        BLOCKED,
        "contraction",
        f"blocks of {TILE * TILE} threads, each thread computing 8 x 8 (4 x 4 for long sums) output elements "
        "kept in registers, both operands' tiles staged in shared memory: each staged value is read once "
        "for several outputs",
        blocked,
    ),
    Shape(
        SPLIT,
        "contraction",
        "the blocked shape with K split over several blocks per output tile, each adding its part into the "
        "output: for outputs too small to fill the GPU with one block per tile while K is long",
        split,
    ),
    Shape(
        DOT,
        "contraction",
        f"one block of {DOT_THREADS} threads per output element, each thread summing a strided share of k "
        "and the block adding the shares: for outputs a few columns wide (a matrix times a vector)",
        dot,
    ),
    Shape(
        CONV_BLOCKED,
        "contraction",
        f"a convolution as a product of output channels by (batch, position) columns: blocks of {THREADS} "
        f"threads, each computing 8 x 8 (or 4 x 8, 4 x 4) outputs kept in registers, the filter and the "
        f"input under its taps staged in shared memory a few whole input channels at a time ({SIDE_N} or "
        "more columns a block)",
        conv_blocked,
    ),
    Shape(
        BLOCKED_FUSED,
        "contraction",
        f"a product fused with its epilogue on the blocked shape: blocks of {TILE * TILE} threads, each "
        "summing 8 x 8 outputs (4 x 4 on small ones) in registers from tiles staged in shared memory, then "
        "your lines once per output on its sum",
        blocked_fused,
    ),
    Shape(
        VECTOR4,
        "map",
        "four consecutive elements per thread, read and written with 16-byte float4 loads and stores",
        vectorised,
    ),
    Shape(
        BLOCK_ROW,
        "reduce",
        f"one block of {ROW_THREADS} threads per output row, each thread reducing a strided share of the "
        "row and the block combining the shares in shared memory",
        block_rows,
    ),
    Shape(
        BLOCK_INDEX,
        "reduce",
        f"one block of {ROW_THREADS} threads per row of an argmax or argmin, each thread keeping the best of "
        "a strided share and the block combining the (value, index) pairs, a tie going to the first index",
        block_index,
    ),
    Shape(
        SPLIT_ROW,
        "reduce",
        "the block_row shape with each row shared by several blocks, each thread reducing a strided share "
        "and the framework combining the blocks' results: for rows too few to fill the GPU",
        split_rows,
    ),
    Shape(
        BLOCK_FOLD,
        "reduce",
        f"one block of {ROW_THREADS} threads per row folding it (the framework's fold, in strided shares "
        "combined in shared memory), then your lines once per row on the finished value",
        block_fold,
    ),
    Shape(
        SPLIT_FOLD,
        "reduce",
        "the block_fold shape with each row folded by several blocks whose results the framework combines, "
        "then your lines once per row: for rows too few to fill the GPU",
        split_fold,
    ),
    Shape(
        EACH_ROW,
        "reduce",
        f"a warp (rows under {WIDE} elements) or a block of {BLOCK} threads per row; the framework combines "
        "the row's statistics over its threads, then each thread writes out(k) for its own strided k",
        each_row,
    ),
    Shape(
        BLOCK_SCAN,
        "reduce",
        f"a block of {ROW_THREADS} threads per row of a cumsum or cumprod, each thread scanning a contiguous "
        "chunk from the carry of the chunks before it (the framework scans the chunks' totals)",
        block_scan,
    ),
)
BY_NAME: dict[str, Shape] = {s.name: s for s in SHAPES}


# The shape the framework runs a body on where that body moves there unchanged, by kind, in order of
# preference; measured on the H100 with the rules' bodies (benchmarks/results/launch_shapes_rules/): the
# products' shapes 0.30-0.95x eager against 0.02-0.21x on the first contract, all strictly correct; vector4
# 1.00-1.10x the first contract on 18 of 18 maps, strictly correct (the H200, the model's bodies); the
# rows shared by blocks and each_row strictly correct, level 2 p3 1.18x -> 1.50x eager, the ResNet block
# 0.56x -> 1.24x (benchmarks/results/row_shapes/). A shape joins only once a GPU has judged it. block_scan
# joined on 2026-12-06 (benchmarks/results/family_scale/): at KernelBench's scale the first contract's one
# float carried along 9,600 signed terms was 1.6e-3 off PyTorch's chunked scan, past atol = 1e-4, where
# PyTorch's own float32 is within it of float64. block_index, and block_row for a variance, logsumexp and
# product, joined the same day: at that scale one thread a row ran them at 0.06-0.41x eager, a block a row
# at 0.63-1.92x, all strictly correct. conv_blocked joined the same day (benchmarks/results/conv_tiles/, the
# H100): the eight level-1 conv tasks of benchmarks/conv_tasks 0.34x -> 0.74x eager (geomean; 0.21-1.23x ->
# 0.23-3.34x), the model's bodies the same, all strictly correct; only the 3-D convolution was slower. Its
# staging without divisions and a strided transposed convolution's split by phase, the same day
# (benchmarks/results/conv_phases/, the H100): nine conv tasks 0.66x -> 0.99x, four fused 0.72x -> 1.11x.
# blocked_fused, and a lone linear layer's bias on blocked and split, joined on 2026-12-07
# (benchmarks/results/fused_products/, the H100): six own fused product tasks 0.05x -> 0.43x eager against
# one thread an output, shared L2's matmul task 0.01x -> 0.15x and L3's MLP 0.01x -> 0.18x, every
# candidate strictly correct, the model's bodies as the rules'.
RULED: dict[str, tuple[str, ...]] = {
    "contraction": (DOT, SPLIT, BLOCKED, CONV_BLOCKED, BLOCKED_FUSED),
    "reduce": (SPLIT_ROW, BLOCK_ROW, SPLIT_FOLD, BLOCK_FOLD, EACH_ROW, BLOCK_SCAN, BLOCK_INDEX),
    "map": (VECTOR4,),
}


_CARRIES = re.compile(r"\bcarry\s*[-+*/]?=[^=]")


def _shares_hold(region: Region, body: str) -> bool:
    """Whether a body right on the whole row stays right on a share of it, where that hangs on the body:
    a variance's must take its squares about the skeleton's `row_mean` (a mean of its own over R would be
    its share's), a scan's must leave its running value in `carry` (the chunk's total that the next
    chunks start from; on the first contract nothing reads it after the row), and a convolution's loops
    must run to C and K0.. (on conv_blocked a slice holds a few channels, not all of them)."""
    if len(region.steps) > 1:  # a fused region: the fold is the framework's, the body only its steps
        return True
    target = region.steps[0].target
    if target in SPREAD:
        return "row_mean" in body
    if target in SCAN:
        return _CARRIES.search(body) is not None
    if target in CONV:  # a slice is C channels with every tap: the loops must run to those names
        bounds = ["C", *(f"K{j}" for j in range(CONV[target]))]
        return all(re.search(rf"<\s*{b}\b", body) for b in bounds)
    return True


def ruled_launch(region: Region, body: str) -> tuple[str, Contract] | None:
    """The framework's own launch for a body written on its first contract (RULED): the first shape of
    the region's kind that fits it and that the body moves to unchanged, passing the local checks there;
    None keeps the first contract."""
    if not moves_unchanged(body) or not _shares_hold(region, body):
        return None
    for name in RULED.get(region.kind, ()):
        try:
            contract = BY_NAME[name].build(region)
        except RegionError:
            continue
        if check(contract, body).ok:
            return name, contract
    return None


def shapes_for(region: Region) -> list[tuple[Shape, Contract]]:
    """The menu for one region: every shape that fits it, with its contract."""
    menu = []
    for shape in SHAPES:
        if shape.kind != region.kind:
            continue
        try:
            menu.append((shape, shape.build(region)))
        except RegionError:
            continue
    return menu


def shaped(region: Region, name: str) -> Contract:
    """The region's contract on the named shape; RegionError if it has no such shape or it does not fit."""
    if name not in BY_NAME:
        raise RegionError(f"{region.id}: no launch shape named {name!r}; known: {', '.join(BY_NAME)}")
    return BY_NAME[name].build(region)


def _vector_load(name: str) -> str:
    """One 16-byte load of a same-shape input's four values, spread into an array the lanes index."""
    v = f"kg_v_{name}"
    return (
        f"        const float4 {v} = reinterpret_cast<const float4*>(p_{name})[kg_q];\n"
        f"        const float kg_l_{name}[4] = {{{v}.x, {v}.y, {v}.z, {v}.w}};\n"
    )
