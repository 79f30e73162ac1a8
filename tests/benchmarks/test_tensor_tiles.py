"""The 3xTF32 tile prototype builds for sm_90 on every case it measures (NVRTC, no GPU), and its operand
reads and stores stay in the tile's scope; a GPU runs it only in the benchmark."""

from __future__ import annotations

import pytest

from benchmarks import tensor_tiles
from evaluator.regions import nvrtc


@pytest.mark.parametrize("make", tensor_tiles.CASES)
def test_every_case_compiles(have_nvrtc: None, make) -> None:
    case = make()
    compiled = nvrtc.compile_kernel(tensor_tiles.source(case), "kg_tile.cu", arch="sm_90")
    assert compiled.ok, compiled.log


def test_grid_covers_the_output() -> None:
    case = tensor_tiles.CASES[1]()  # 1000 x 2000: neither a multiple of the tile
    cols, rows, batch = tensor_tiles.grid(case.product)
    assert cols * tensor_tiles.BN >= 2000 > (cols - 1) * tensor_tiles.BN
    assert rows * tensor_tiles.BM >= 1000 > (rows - 1) * tensor_tiles.BM
    assert batch == 1
