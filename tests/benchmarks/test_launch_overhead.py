"""The launch-overhead benchmark builds its relu kernels from the framework's own contracts and body at each
size, checks they compute relu on the GPU before timing them, and reports every row it measured."""

from __future__ import annotations

import pytest

from benchmarks.launch_overhead import LATENCY_SIZES, _contracts


def test_the_benchmarks_problem_offers_one_map_with_a_rule_and_a_vector_shape() -> None:
    (_, first, body), (_, vector, _) = _contracts(1024)
    assert first.kind == "map" and body == "float t1 = kg_relu(x);"
    assert vector.launch["grid"] == [1, 1, 1]
    assert _contracts(1 << 24)[1][1].launch["grid"] == [16384, 1, 1]  # four elements a thread at each size


@pytest.mark.gpu
def test_every_launcher_row_is_measured() -> None:
    from benchmarks.launch_overhead import measure

    measured = measure()
    rows = measured["us_per_call"]  # ATen, then 2 shapes x 2 launchers, each bare and through the counter
    assert len(rows) == 9 and all(value > 0 for value in rows.values())
    latency = measured["latency_us"]
    assert sorted(latency) == sorted(str(size) for size in LATENCY_SIZES)
    assert all(len(row) == 3 and all(v > 0 for v in row.values()) for row in latency.values())
