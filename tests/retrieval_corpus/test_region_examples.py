"""Region examples: every body beside a corpus example compiles under NVRTC in its contract and computes its
region (CPU emulation on the example's reference shrunk), and a search result carries them."""

from __future__ import annotations

import pytest

from evaluator.problem import problem_from_source, shrink_problem
from regions.check import check
from regions.contract import render
from regions.emulate import emulate
from regions.partition import partition
from regions.trace import trace_problem
from retrieval_corpus.corpus import load_examples
from retrieval_corpus.region_examples import from_hit, region_examples

WITH_BODIES = [e for e in load_examples() if e.region_bodies]


def test_the_corpus_has_region_examples_of_every_kind() -> None:
    kinds = {
        ex.kind
        for e in WITH_BODIES
        for ex in region_examples(e.id, e.reference, tuple(sorted(e.region_bodies.items())))
    }
    assert kinds == {"map", "reduce", "window", "contraction"}


@pytest.mark.parametrize("example", WITH_BODIES, ids=lambda e: e.id)
def test_each_body_compiles_and_computes_its_region(example) -> None:
    problem = problem_from_source(example.reference)
    full_size = {r.id: r for r in partition(trace_problem(problem))}
    small = {r.id: r for r in partition(trace_problem(shrink_problem(problem)))}
    for shown in region_examples(example.id, example.reference, tuple(sorted(example.region_bodies.items()))):
        full = check(render(full_size[shown.region_id]), shown.body)
        assert full.ok, full.errors
        region = small[shown.region_id]
        got = emulate(region, render(region), shown.body)
        assert got.ok, f"{example.id}/{shown.region_id}: {got.error}"
        assert shown.body.strip() in shown.text() and shown.kernel.rstrip().endswith("from here ----")


def test_a_search_result_carries_its_region_examples_whole() -> None:
    example = next(e for e in WITH_BODIES if e.id == "softmax_warp_per_row_registers")
    hit = example.to_result(1.0)
    (shown,) = from_hit(hit)
    assert shown.kind == "reduce" and "torch.softmax" in shown.pytorch
    text = shown.text()  # the framework's statistics and loop in the kernel so far, the one line after it
    assert "const float row_sum" in text and "out(k) = expf(x(k) - row_max) / row_sum;" in text
    assert from_hit(next(e for e in load_examples() if not e.region_bodies).to_result(1.0)) == ()


def test_an_example_is_shown_in_the_regions_own_names_when_the_arities_match() -> None:
    example = next(e for e in WITH_BODIES if e.id == "gemm_nt_smem_tiled")
    (shown,) = from_hit(example.to_result(1.0))
    mine = shown.renamed(["A", "B"])
    assert "t1 = torch.matmul(A, B)" in mine.pytorch and "p_A[m * 500 + k]" in mine.kernel
    assert "result += A(k) * B(k);" in mine.body and "t0" not in mine.text()
    assert "blockIdx.x" in mine.kernel  # members keep their names
    assert shown.renamed(["A", "B", "C"]) is shown  # another arity: left as it is
