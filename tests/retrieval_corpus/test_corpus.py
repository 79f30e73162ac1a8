"""Every example is a complete KernelBench-format pair that passes the evaluator's static checks (CPU)."""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import pytest

from evaluator.extract import extract_candidate
from evaluator.problem import validate_source
from evaluator.static_checks import check_candidate
from retrieval_corpus.corpus import (
    CATEGORIES,
    CorpusError,
    corpus_hash,
    document_text,
    load_example,
    load_examples,
)

EXAMPLES = load_examples()
IDS = [e.id for e in EXAMPLES]


def test_corpus_size_and_category_coverage() -> None:
    assert len(EXAMPLES) >= 40
    covered = {e.category for e in EXAMPLES}
    assert covered == set(CATEGORIES), f"categories without an example: {set(CATEGORIES) - covered}"


@pytest.mark.parametrize("example", EXAMPLES, ids=IDS)
def test_reference_is_a_kernelbench_problem(example) -> None:
    validate_source(example.reference, example.id)
    assert "load_inline" not in example.reference


@pytest.mark.parametrize("example", EXAMPLES, ids=IDS)
def test_solution_passes_static_checks(example) -> None:
    assert extract_candidate(example.solution) is not None, "solution must define ModelNew at top level"
    findings = check_candidate(example.solution, example.reference)
    blocking = [f for f in findings if f["severity"] in ("reject", "hack")]
    assert not blocking, blocking
    assert "cuda_sources" in example.solution


def _extension_name(source: str) -> str:
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "load_inline":
            for kw in node.keywords:
                if kw.arg == "name":
                    return ast.literal_eval(kw.value)
    raise AssertionError("no load_inline(name=...) call")


def test_extension_names_are_unique() -> None:
    """Two examples with one extension name would overwrite each other's build directory."""
    names = [_extension_name(e.solution) for e in EXAMPLES]
    assert len(names) == len(set(names))


def test_every_example_carries_a_gpu_measurement() -> None:
    """A new example must go through `python -m retrieval_corpus.validate` on a GPU before it lands."""
    for e in EXAMPLES:
        assert e.measured is not None, f"{e.id}: not validated on a GPU yet"
        assert e.measured["verdict"] and e.measured["gpu"], e.id


def test_document_text_names_the_reference_ops() -> None:
    example = next(e for e in EXAMPLES if e.id == "reduction_row_sum_warp_shuffle")
    text = document_text(example)
    assert "torch.sum(x, dim=-1)" in text and example.title in text


def test_loader_rejects_broken_examples(tmp_path: Path) -> None:
    src = EXAMPLES[0].path
    bad = tmp_path / src.name
    shutil.copytree(src, bad)
    meta = json.loads((bad / "meta.json").read_text())
    (bad / "meta.json").write_text(json.dumps({**meta, "category": "matmul"}))
    with pytest.raises(CorpusError, match="category"):
        load_example(bad)
    (bad / "meta.json").write_text(json.dumps({**meta, "id": "other"}))
    with pytest.raises(CorpusError, match="differs"):
        load_example(bad)
    (bad / "solution.py").unlink()
    with pytest.raises(CorpusError, match="missing solution.py"):
        load_example(bad)


def test_corpus_hash_changes_with_any_file(tmp_path: Path) -> None:
    copy = tmp_path / EXAMPLES[0].id
    shutil.copytree(EXAMPLES[0].path, copy)
    before = corpus_hash([load_example(copy)])
    assert corpus_hash([load_example(copy)]) == before
    (copy / "solution.py").write_text((copy / "solution.py").read_text() + "\n# edited\n")
    assert corpus_hash([load_example(copy)]) != before
