"""The retrieval benchmark's labels stay valid as the corpus changes; the metrics are computed correctly."""

from __future__ import annotations

from benchmarks.retrieval_quality import HELD_OUT, QUERIES, evaluate
from retrieval_corpus.corpus import load_examples


def test_enough_labelled_queries_naming_real_examples() -> None:
    assert len(QUERIES) >= 30 and len(HELD_OUT) >= 10
    known = {e.id for e in load_examples()}
    for query, relevant in QUERIES + HELD_OUT:
        assert relevant and set(relevant) <= known, (query, set(relevant) - known)


def test_recall_and_mrr_arithmetic() -> None:
    order = {q: [{"id": r} for r in rel] for q, rel in QUERIES}
    perfect = evaluate(lambda q, n: order[q][:n], k=3)
    assert perfect["recall_at_k"] == 1.0 and perfect["mrr"] == 1.0
    nothing = evaluate(lambda q, n: [{"id": "none"}] * n, k=3)
    assert nothing["recall_at_k"] == 0.0 and nothing["mrr"] == 0.0
    late = evaluate(lambda q, n: ([{"id": "x"}] * 3 + order[q])[:n], k=3)
    assert late["recall_at_k"] == 0.0 and abs(late["mrr"] - 0.25) < 1e-12
