"""The BM25 keyword baseline ranks by shared terms and honours the category filter."""

from __future__ import annotations

from retrieval_corpus.corpus import load_examples
from retrieval_corpus.keyword import KeywordIndex, tokenize


def test_tokenize_is_plain() -> None:
    assert tokenize("torch.sum(x, dim=-1) RMSNorm") == ["torch", "sum", "x", "dim", "1", "rmsnorm"]


def test_exact_terms_rank_first() -> None:
    index = KeywordIndex(load_examples())
    assert index.search("RMSNorm", k=1)[0]["id"] == "normalization_rmsnorm_block_float4"
    hits = index.search("maxpool2d padding", k=3, category="pooling")
    assert hits[0]["id"] == "pooling_maxpool2d_direct"
    assert {h["category"] for h in hits} == {"pooling"}


def test_unrelated_query_scores_zero() -> None:
    hits = KeywordIndex(load_examples()).search("zzzz qqqq", k=2)
    assert [h["score"] for h in hits] == [0.0, 0.0]
