"""The retriever seam: validated example kernels of the retrieval corpus close to a query."""

from __future__ import annotations

from typing import Any

from tools.seam import Seam


def _search(query: str, k: int, category: str | None) -> list[dict[str, Any]]:
    from retrieval_corpus.index import search

    return search(query, k=k, category=category)


RETRIEVER: Seam = Seam(_search)


def search_examples(query: str, k: int = 3, category: str | None = None) -> list[dict[str, Any]]:
    """Search with the current implementation (the Chroma index unless a test swapped it)."""
    return RETRIEVER.current(query, k, category) if k > 0 else []
