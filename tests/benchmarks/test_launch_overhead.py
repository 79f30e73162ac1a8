"""The launch-overhead benchmark builds its relu kernel from the framework's own contract and body, checks
it computes relu on the GPU before timing it, and reports every row it measured."""

from __future__ import annotations

import pytest

from benchmarks.launch_overhead import PROBLEM


def test_the_benchmarks_problem_offers_one_map_with_a_rule_and_a_vector_shape() -> None:
    from regions.offering import offered
    from regions.rules import rule_body
    from regions.shapes import shaped

    ((region, first),), _ = offered(PROBLEM, "moderate")
    assert region.kind == "map" and rule_body(region, first) == "float t1 = kg_relu(x);"
    assert shaped(region, "vector4").launch["grid"] == [1, 1, 1]


@pytest.mark.gpu
def test_every_launcher_row_is_measured() -> None:
    from benchmarks.launch_overhead import measure

    rows = measure()["us_per_call"]
    assert len(rows) == 5 and all(value > 0 for value in rows.values())
