"""How the blocked convolution (regions.conv_tiles) cuts its implicit product: rows are the output
channels of one group (M), columns the output's (batch, position) pairs of one stride phase (N), and K the
group's input channels times a phase's taps, in slices of whole channels; a block of THREADS threads owns
a tile of them, each thread a few outputs in registers. RegionError where no block's tile fills, an offset
would pass 32 bits or a slice outgrows shared memory: such a convolution keeps one thread an output.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from regions.blocked_tiles import LANES, PER
from regions.contraction import ConvGeometry
from regions.model import Region, RegionError
from regions.tiles import TILE

THREADS = TILE * TILE
SIDE_N = TILE * PER  # the columns a block of TILE x TILE threads owns
NARROW = TILE * LANES // 2  # fewer output channels a group would leave half of such a block's rows idle
MIN_ROWS = 16  # fewer leave most of a narrow block's rows idle: one thread an output
SLICE = 8  # the K values a slice aims for: the fewest whole channels that reach it
SHARED_FLOATS = 12 * 1024  # 48 KiB of static shared memory
INT_LIMIT = 2**31  # staged offsets are 32-bit: a filter, a sample of the input and the columns below it


@dataclass(frozen=True)
class Phases:
    """The stride's phases of a transposed convolution's outputs (per dimension: `stride` phases, each
    reading `taps` of the filter's taps at `positions` output positions); one phase of the filter's own
    taps elsewhere (a stride of 1)."""

    stride: tuple[int, ...]
    taps: tuple[int, ...]
    positions: tuple[int, ...]

    @property
    def count(self) -> int:
        return prod(self.stride)

    @property
    def split(self) -> bool:
        return self.count > 1


@dataclass(frozen=True)
class Tile:
    """How the implicit product is cut: M rows (output channels a group) by N columns ((batch, position)
    pairs of a phase), K = channels x a phase's taps in slices of `width` (`per_slice` whole channels), a
    thread's `per_m` x `per_n` outputs in a block's `side_m` x `side_n` tile, `threads_n` threads along
    its columns."""

    rows: int
    cols: int
    phases: Phases
    per_m: int
    per_slice: int
    width: int
    threads_n: int
    per_n: int

    @property
    def taps(self) -> int:
        return prod(self.phases.taps)

    @property
    def side_m(self) -> int:
        return THREADS // self.threads_n * self.per_m

    @property
    def side_n(self) -> int:
        return self.threads_n * self.per_n


def phases_of(geo: ConvGeometry, batch: int) -> Phases:
    """A transposed convolution's phases where it has a stride, dilation 1 and enough columns a phase to
    fill a block; else one phase."""
    unsplit = Phases((1,) * geo.dims, geo.taps, geo.spatial_out)
    if not geo.transposed or set(geo.dilation) != {1} or set(geo.stride) == {1}:
        return unsplit
    s = geo.stride
    each = Phases(
        s,
        tuple(-(-k // st) for k, st in zip(geo.taps, s, strict=True)),
        tuple(-(-o // st) for o, st in zip(geo.spatial_out, s, strict=True)),
    )
    return each if batch * prod(each.positions) >= SIDE_N else unsplit


def conv_tile(region: Region, geo: ConvGeometry) -> Tile:
    """The cut of the region's convolution; RegionError where no block's tile fills, a 32-bit offset could
    overflow or a slice outgrows shared memory."""
    batch = region.steps[0].out.shape[0]
    phases = phases_of(geo, batch)
    rows, cols, taps = geo.per_group, batch * prod(phases.positions), prod(phases.taps)
    per_m, threads_n, per_n = _layout(rows, cols)
    if rows < MIN_ROWS or cols < threads_n * per_n:
        raise RegionError(
            f"{region.id}: {rows} output channels a group by {cols} outputs fill no block's tile"
        )
    filter_size = geo.in_channels * geo.per_group * prod(geo.taps)
    if max(filter_size, geo.in_channels * prod(geo.spatial_in), cols) >= INT_LIMIT:
        raise RegionError(f"{region.id}: too large for the blocked convolution's 32-bit offsets")
    # equal slices: the most channels dividing the group's, up to the fewest that hold SLICE values
    reach = min(geo.channels, -(-SLICE // taps))
    per_slice = max(d for d in range(1, reach + 1) if geo.channels % d == 0)
    tile = Tile(rows, cols, phases, per_m, per_slice, per_slice * taps, threads_n, per_n)
    if tile.width * (tile.side_m + LANES + tile.side_n + LANES) > SHARED_FLOATS:
        raise RegionError(f"{region.id}: a slice of {tile.width} taps does not fit in shared memory")
    return tile


def _layout(rows: int, cols: int) -> tuple[int, int, int]:
    """A thread's outputs along the rows, the block's threads along its columns, a thread's outputs along
    them. TILE x TILE threads with 8 x 8 outputs each (4 x 8 under TILE * PER rows); for NARROW rows or
    fewer, with enough columns, the fewest rows of threads whose 4 outputs each cover them, the block's
    other threads along the columns (4 outputs each where 8 would pass THREADS columns, the most one
    staging pass holds)."""
    if rows >= TILE * PER:
        return PER, TILE, PER
    threads_m = 1 << max(0, -(-rows // LANES) - 1).bit_length()  # the power of two that covers rows / 4
    threads_n = THREADS // threads_m
    per_n = PER if threads_n * PER <= THREADS else LANES
    if rows > NARROW or cols < threads_n * per_n:
        return LANES, TILE, PER
    return LANES, threads_n, per_n
