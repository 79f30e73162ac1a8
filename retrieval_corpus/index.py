"""The persistent Chroma index over the corpus, and the query API the retriever seam uses.

One collection; each example is one document (`corpus.document_text`: title, the reference's operators,
when to use it, techniques) embedded with the packaged all-MiniLM-L6-v2. The collection records the
corpus content hash and is rebuilt only when that changes (or when forced). Everything runs offline.

Search is hybrid by default: the Chroma (dense) ranking and a BM25 keyword ranking of the same documents
merged by reciprocal-rank fusion. MiniLM alone misses queries written as code (`W @ x + b`,
`x.mean(dim=(2, 3))`) that exact terms catch; benchmarks/retrieval_quality.py measures all three.
"""

from __future__ import annotations

import fcntl
import os
import threading
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import chromadb
from chromadb.config import Settings
from langchain_chroma import Chroma

from retrieval_corpus.corpus import CATEGORIES, Example, corpus_hash, document_text, load_examples
from retrieval_corpus.embeddings import MODEL_NAME, WEIGHTS_SHA256, shared_embeddings
from retrieval_corpus.keyword import KeywordIndex

COLLECTION = "kernelgraph_examples"
INDEX_DIR_ENV = "KERNELGRAPH_INDEX_DIR"
# Reciprocal-rank fusion constant; 60 is the value of Cormack et al. (2009), not tuned here.
RRF_K = 60
Mode = Literal["hybrid", "dense", "keyword"]


def default_persist_dir() -> Path:
    """$KERNELGRAPH_INDEX_DIR, else the user's cache (the package directory may be read-only)."""
    env = os.environ.get(INDEX_DIR_ENV)
    if env:
        return Path(env)
    cache = os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache"))
    return Path(cache) / "kernelgraph" / "retrieval_index"


def _client(persist_dir: Path) -> chromadb.ClientAPI:
    persist_dir.mkdir(parents=True, exist_ok=True)
    return chromadb.PersistentClient(path=str(persist_dir), settings=Settings(anonymized_telemetry=False))


@contextmanager
def _build_lock(persist_dir: Path):  # noqa: ANN202
    """Serialise builds of one directory across processes (parallel graph runs share the cache)."""
    persist_dir.mkdir(parents=True, exist_ok=True)
    with (persist_dir / ".build.lock").open("w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def build_index(
    persist_dir: str | Path | None = None, force: bool = False, examples: list[Example] | None = None
) -> dict[str, Any]:
    """Make the collection match the corpus; a no-op when the stored content hash already matches.

    Returns what happened: persist_dir, collection, corpus_hash, count, rebuilt.
    """
    path = Path(persist_dir) if persist_dir is not None else default_persist_dir()
    corpus = examples if examples is not None else load_examples()
    target = corpus_hash(corpus, extra=WEIGHTS_SHA256)
    info = {"persist_dir": str(path), "collection": COLLECTION, "corpus_hash": target, "count": len(corpus)}
    with _build_lock(path):
        client = _client(path)
        names = {c.name for c in client.list_collections()}
        if COLLECTION in names:
            current = client.get_collection(COLLECTION)
            fresh = (current.metadata or {}).get("corpus_hash") == target and current.count() == len(corpus)
            if fresh and not force:
                return {**info, "rebuilt": False}
            client.delete_collection(COLLECTION)
        store = Chroma(
            collection_name=COLLECTION,
            embedding_function=shared_embeddings(),
            client=client,
            collection_metadata={"corpus_hash": target, "embedding_model": MODEL_NAME},
            collection_configuration={"hnsw": {"space": "cosine"}},
        )
        if corpus:
            store.add_texts(
                texts=[document_text(e) for e in corpus],
                metadatas=[{"id": e.id, "category": e.category} for e in corpus],
                ids=[e.id for e in corpus],
            )
    return {**info, "rebuilt": True}


class CorpusIndex:
    """A built index plus the loaded examples it returns; safe to share between threads."""

    def __init__(self, persist_dir: str | Path | None = None, examples: list[Example] | None = None) -> None:
        self.examples = {e.id: e for e in (examples if examples is not None else load_examples())}
        self.info = build_index(persist_dir, examples=list(self.examples.values()))
        self._store = Chroma(
            collection_name=COLLECTION,
            embedding_function=shared_embeddings(),
            client=_client(Path(self.info["persist_dir"])),
            create_collection_if_not_exists=False,
        )
        self._keyword = KeywordIndex(list(self.examples.values()))
        self._lock = threading.Lock()

    def dense(self, query: str, k: int, category: str | None = None) -> list[tuple[str, float]]:
        """(id, cosine similarity) from Chroma, closest first."""
        with self._lock:
            hits = self._store.similarity_search_with_score(
                query, k=k, filter={"category": category} if category else None
            )
        return [(doc.metadata["id"], 1.0 - distance) for doc, distance in hits]

    def search(
        self, query: str, k: int = 3, category: str | None = None, mode: Mode = "hybrid"
    ) -> list[dict[str, Any]]:
        """Top-k examples for a free-text query, best first.

        score: the fused reciprocal-rank score in 'hybrid' mode (at most 2 / (RRF_K + 1)), the cosine
        similarity in 'dense' mode, the BM25 score in 'keyword' mode; higher is closer in every mode.
        """
        if category is not None and category not in CATEGORIES:
            raise ValueError(f"unknown category {category!r}; one of {CATEGORIES}")
        if k <= 0:
            return []
        if mode == "dense":
            return [self.examples[i].to_result(score) for i, score in self.dense(query, k, category)]
        if mode == "keyword":
            return self._keyword.search(query, k=k, category=category)
        pool = sum(1 for e in self.examples.values() if category is None or e.category == category)
        fused: dict[str, float] = {}
        rankings = (
            [i for i, _ in self.dense(query, pool, category)],
            [hit["id"] for hit in self._keyword.search(query, k=pool, category=category)],
        )
        for ranking in rankings:
            for rank, ex_id in enumerate(ranking, 1):
                fused[ex_id] = fused.get(ex_id, 0.0) + 1.0 / (RRF_K + rank)
        best = sorted(fused.items(), key=lambda item: (-item[1], item[0]))[:k]
        return [self.examples[ex_id].to_result(score) for ex_id, score in best]


@lru_cache(maxsize=1)
def default_index() -> CorpusIndex:
    """The process-wide index over the packaged corpus in the default directory, built on first use."""
    return CorpusIndex()


def search(
    query: str, k: int = 3, category: str | None = None, mode: Mode = "hybrid"
) -> list[dict[str, Any]]:
    """Query the packaged corpus: list of {id, title, category, techniques, when_to_use, score,
    reference, solution, speedup}, best first; `category` restricts to one operator category."""
    return default_index().search(query, k=k, category=category, mode=mode)
