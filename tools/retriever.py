"""The retrieval corpus as a LangChain tool: validated example kernels close to a query."""

from __future__ import annotations

from typing import Annotated, Any

from langchain_core.tools import tool
from pydantic import Field

from retrieval_corpus.corpus import Category
from tools.seam import Seam


def _search(query: str, k: int, category: str | None) -> list[dict[str, Any]]:
    from retrieval_corpus.index import search

    return search(query, k=k, category=category)


RETRIEVER: Seam = Seam(_search)


def search_examples(query: str, k: int = 3, category: str | None = None) -> list[dict[str, Any]]:
    """Search with the current implementation (the Chroma index unless a test swapped it)."""
    return RETRIEVER.current(query, k, category) if k > 0 else []


@tool("search_examples")
def search_examples_tool(
    query: str,
    k: Annotated[int, Field(ge=1, le=10, description="How many examples to return.")] = 3,
    category: Annotated[Category | None, Field(description="Restrict to one kernel category.")] = None,
) -> list[dict[str, Any]]:
    """Find example kernels (reference, solution, techniques, measured speedup) similar to the query."""
    return search_examples(query, k, category)
