"""The Chroma index builds offline in a temp directory, answers queries, filters, rebuilds only on change."""

from __future__ import annotations

import shutil
import socket
from pathlib import Path

import pytest

from retrieval_corpus.corpus import load_examples
from retrieval_corpus.index import CorpusIndex, build_index


@pytest.fixture(scope="module")
def no_network():
    """Any attempt to open an internet connection fails the test (the build must be fully offline)."""
    original = socket.socket.connect

    def guarded(self, address):  # noqa: ANN001, ANN202
        if self.family in (socket.AF_INET, socket.AF_INET6):
            raise AssertionError(f"network access attempted: {address}")
        return original(self, address)

    socket.socket.connect = guarded
    yield
    socket.socket.connect = original


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory, no_network) -> CorpusIndex:  # noqa: ANN001
    return CorpusIndex(tmp_path_factory.mktemp("chroma"))


def test_build_is_offline_and_complete(index: CorpusIndex) -> None:
    assert index.info["rebuilt"] is True
    assert index.info["count"] == len(load_examples())


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("layer normalization over the hidden size of a transformer",
         "normalization_layernorm_rows_registers"),
        ("cross entropy loss between logits and integer class targets", "loss_cross_entropy_warp_logsumexp"),
        ("softmax across channels of a Conv3d output, dim=1", "softmax_channel_dim_strided"),
    ],
)
def test_query_finds_the_expected_example(index: CorpusIndex, query: str, expected: str) -> None:
    hits = index.search(query, k=3)
    assert expected in [h["id"] for h in hits]


def test_results_carry_scores_metadata_and_sources(index: CorpusIndex) -> None:
    hits = index.search("row-wise sum with warp shuffles", k=5)
    assert len(hits) == 5
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True) and all(-1.0 <= s <= 1.0 for s in scores)
    top = hits[0]
    keys = {"id", "title", "category", "techniques", "when_to_use", "score", "reference", "solution"}
    assert set(top) == keys | {"speedup", "region_bodies"}
    assert "class Model" in top["reference"] and "class ModelNew" in top["solution"]


def test_modes_rank_with_their_own_scores(index: CorpusIndex) -> None:
    query = "y = W @ x + b for a single input vector"
    dense = index.search(query, k=3, mode="dense")
    keyword = index.search(query, k=3, mode="keyword")
    hybrid = index.search(query, k=3)
    assert all(-1.0 <= h["score"] <= 1.0 for h in dense)
    assert all(0.0 < h["score"] <= 2.0 / 61 for h in hybrid)
    assert keyword[0]["score"] > 1.0  # BM25, unnormalised
    assert hybrid[0]["id"] in {h["id"] for h in dense + keyword}


def test_category_filter(index: CorpusIndex) -> None:
    for mode in ("hybrid", "dense", "keyword"):
        hits = index.search("fast kernel for a big tensor", k=4, category="pooling", mode=mode)
        assert hits and {h["category"] for h in hits} == {"pooling"}
    with pytest.raises(ValueError, match="unknown category"):
        index.search("anything", category="matmul")


def test_rebuilds_only_when_the_corpus_changes(tmp_path: Path, no_network) -> None:  # noqa: ANN001
    root = tmp_path / "examples"
    for example in load_examples()[:3]:
        shutil.copytree(example.path, root / example.id)
    persist = tmp_path / "index"
    assert build_index(persist, examples=load_examples(root))["rebuilt"] is True
    assert build_index(persist, examples=load_examples(root))["rebuilt"] is False
    assert build_index(persist, force=True, examples=load_examples(root))["rebuilt"] is True
    first = next(root.iterdir())
    (first / "reference.py").write_text((first / "reference.py").read_text() + "\n# changed\n")
    info = build_index(persist, examples=load_examples(root))
    assert info["rebuilt"] is True and info["count"] == 3
    hits = CorpusIndex(persist, examples=load_examples(root)).search("anything", k=10)
    assert len(hits) == 3
