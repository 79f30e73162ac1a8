"""The example corpus on disk: loading and checking examples, the text that gets embedded, the content hash.

Standard library only: `validate.py` runs this on GPU hosts that have torch but no chromadb or langchain.
"""

from __future__ import annotations

import ast
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

Category = Literal[
    "elementwise",
    "activation",
    "reduction",
    "softmax",
    "normalization",
    "pooling",
    "transpose",
    "scan",
    "gemm",
    "gemv",
    "fused_epilogue",
    "convolution",
    "loss",
    "argmax",
]
CATEGORIES: tuple[str, ...] = get_args(Category)
EXAMPLE_FILES: tuple[str, ...] = ("reference.py", "solution.py", "meta.json")
META_KEYS: tuple[str, ...] = ("id", "title", "category", "techniques", "when_to_use", "measured")
MEASURED_KEYS: tuple[str, ...] = ("gpu", "torch", "speedup_eager", "ms_eager", "ms_candidate", "verdict")
# Bump when document_text changes, so persisted indexes built from the old text are rebuilt.
DOCUMENT_FORMAT = 2


class CorpusError(ValueError):
    """An example directory that breaks the corpus contract; the message names the directory and the fault."""


@dataclass(frozen=True)
class Example:
    id: str
    title: str
    category: str
    techniques: tuple[str, ...]
    when_to_use: str
    measured: dict[str, Any] | None
    reference: str
    solution: str
    path: Path
    # region id -> the body of that region's kernel (region_<id>.cu): a kernel-only example for region mode
    region_bodies: dict[str, str] = field(default_factory=dict)

    @property
    def speedup(self) -> float | None:
        """Measured eager speedup on the GPU, if the validation run recorded one."""
        if not self.measured:
            return None
        value = self.measured.get("speedup_eager")
        return float(value) if value is not None else None

    def to_result(self, score: float) -> dict[str, Any]:
        """The dict the query API returns (JSON-serialisable, as graph state must be)."""
        return {
            "id": self.id,
            "title": self.title,
            "category": self.category,
            "techniques": list(self.techniques),
            "when_to_use": self.when_to_use,
            "score": round(float(score), 6),
            "reference": self.reference,
            "solution": self.solution,
            "speedup": self.speedup,
            "region_bodies": dict(self.region_bodies),
        }


def examples_dir() -> Path:
    return Path(__file__).resolve().parent / "examples"


def load_example(path: Path) -> Example:
    """Read and check one example directory."""
    missing = [name for name in EXAMPLE_FILES if not (path / name).is_file()]
    if missing:
        raise CorpusError(f"{path.name}: missing {', '.join(missing)}")
    try:
        meta = json.loads((path / "meta.json").read_text())
    except json.JSONDecodeError as exc:
        raise CorpusError(f"{path.name}/meta.json: invalid JSON ({exc})") from exc
    absent = [key for key in META_KEYS if key not in meta]
    if absent:
        raise CorpusError(f"{path.name}/meta.json: missing keys {absent}")
    if meta["id"] != path.name:
        raise CorpusError(f"{path.name}/meta.json: id {meta['id']!r} differs from the directory name")
    if meta["category"] not in CATEGORIES:
        raise CorpusError(f"{path.name}: category {meta['category']!r} is not one of {CATEGORIES}")
    techniques = meta["techniques"]
    if not isinstance(techniques, list) or not techniques or not all(isinstance(t, str) for t in techniques):
        raise CorpusError(f"{path.name}/meta.json: techniques must be a non-empty list of strings")
    measured = meta["measured"]
    if measured is not None and (not isinstance(measured, dict) or set(MEASURED_KEYS) - set(measured)):
        raise CorpusError(f"{path.name}/meta.json: measured must be null or carry {MEASURED_KEYS}")
    return Example(
        id=meta["id"],
        title=meta["title"],
        category=meta["category"],
        techniques=tuple(techniques),
        when_to_use=meta["when_to_use"],
        measured=measured,
        reference=(path / "reference.py").read_text(),
        solution=(path / "solution.py").read_text(),
        path=path,
        region_bodies={
            f.stem.removeprefix("region_"): f.read_text()
            for f in sorted(path.glob("region_*.cu"))
        },
    )


def load_examples(root: Path | None = None) -> list[Example]:
    """Every example under `root` (default: the packaged corpus), sorted by id."""
    base = root or examples_dir()
    if not base.is_dir():
        raise CorpusError(f"no example directory at {base}")
    dirs = [p for p in sorted(base.iterdir()) if p.is_dir() and not p.name.startswith((".", "_"))]
    return [load_example(p) for p in dirs]


def reference_summary(source: str) -> str:
    """The reference's module docstring and the body of Model.forward: the operators a query names."""
    tree = ast.parse(source)
    parts = [ast.get_docstring(tree) or ""]
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "Model":
            for fn in node.body:
                if isinstance(fn, ast.FunctionDef) and fn.name == "forward":
                    parts += [ast.unparse(stmt) for stmt in fn.body if not isinstance(stmt, ast.Expr)]
    return " ".join(p for p in parts if p)


def document_text(example: Example) -> str:
    """What gets embedded and keyword-indexed: metadata plus the reference's operators, not the CUDA source.

    all-MiniLM-L6-v2 reads at most 256 word pieces, so the text leads with what a query names (title,
    category, the PyTorch ops of the reference) and ends with the techniques, which may be cut off.
    """
    return (
        f"{example.title} ({example.category}). PyTorch reference: {reference_summary(example.reference)}. "
        f"When to use: {example.when_to_use} Techniques: {'; '.join(example.techniques)}."
    )


def corpus_hash(examples: list[Example], extra: str = "") -> str:
    """sha256 over every example file (and `extra`, e.g. the embedding model's digest)."""
    digest = hashlib.sha256(f"format={DOCUMENT_FORMAT};{extra}".encode())
    for example in sorted(examples, key=lambda e: e.id):
        for name in (*EXAMPLE_FILES, *(f"region_{rid}.cu" for rid in sorted(example.region_bodies))):
            digest.update(f"\0{example.id}/{name}\0".encode())
            digest.update((example.path / name).read_bytes())
    return digest.hexdigest()
