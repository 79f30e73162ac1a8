"""A plain keyword baseline (Okapi BM25 over the same document text), to measure what embeddings add."""

from __future__ import annotations

import math
import re
from collections import Counter

from retrieval_corpus.corpus import Example, document_text, load_examples

_TOKEN = re.compile(r"[a-z0-9]+")


def tokenize(text: str) -> list[str]:
    """Lower-cased alphanumeric runs; no stemming or stop words, so the baseline stays plain."""
    return _TOKEN.findall(text.lower())


class KeywordIndex:
    """BM25 (k1=1.5, b=0.75) over `document_text` of each example."""

    def __init__(self, examples: list[Example] | None = None, k1: float = 1.5, b: float = 0.75) -> None:
        self.examples = examples if examples is not None else load_examples()
        self.k1, self.b = k1, b
        self._docs = [Counter(tokenize(document_text(e))) for e in self.examples]
        self._lengths = [sum(d.values()) for d in self._docs]
        self._avg_len = sum(self._lengths) / max(1, len(self._lengths))
        df: Counter[str] = Counter()
        for doc in self._docs:
            df.update(doc.keys())
        n = len(self._docs)
        self._idf = {t: math.log(1.0 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}

    def _score(self, terms: list[str], i: int) -> float:
        doc, length = self._docs[i], self._lengths[i]
        score = 0.0
        for term in terms:
            tf = doc.get(term, 0)
            if tf:
                norm = tf + self.k1 * (1.0 - self.b + self.b * length / self._avg_len)
                score += self._idf[term] * tf * (self.k1 + 1.0) / norm
        return score

    def search(self, query: str, k: int = 3, category: str | None = None) -> list[dict]:
        """Same result shape as `retrieval_corpus.index.search`; score is the BM25 score."""
        terms = tokenize(query)
        scored = [
            (self._score(terms, i), e)
            for i, e in enumerate(self.examples)
            if category is None or e.category == category
        ]
        scored.sort(key=lambda pair: (-pair[0], pair[1].id))
        return [e.to_result(score) for score, e in scored[:k]]
