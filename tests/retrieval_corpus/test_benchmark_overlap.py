"""No corpus example solves one of the 30 benchmark problems (operator chain and shapes, traced on meta)."""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval_corpus.corpus import load_examples
from retrieval_corpus.opchain import OpChain, same_problem, trace

EXAMPLES = load_examples()


@pytest.fixture(scope="module")
def benchmark_chains(kernelbench_dir: Path) -> dict[str, OpChain]:
    files = sorted(kernelbench_dir.glob("level[123]/*.py"))
    assert len(files) == 30
    return {f"{f.parent.name}/{f.name}": trace(f.read_text(), f.stem) for f in files}


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.id for e in EXAMPLES])
def test_example_solves_no_benchmark_problem(example, benchmark_chains: dict[str, OpChain]) -> None:
    chain = trace(example.reference, example.id)
    assert chain.ops, "the reference ran no aten op"
    clashes = {name: why for name, bench in benchmark_chains.items() if (why := same_problem(chain, bench))}
    assert not clashes, clashes


def test_the_comparison_detects_a_benchmark_copy(kernelbench_dir: Path) -> None:
    """The check can fail: a renamed copy of a benchmark problem, or the same op on its shapes, is caught."""
    source = (kernelbench_dir / "level1" / "5_Matrix_scalar_multiplication.py").read_text()
    bench = trace(source, "bench")
    assert "identical operator chain" in (same_problem(trace(source, "copy"), bench) or "")
    relaid = source.replace("return A * s", "return (A.t() * s).t()")
    assert relaid != source
    assert "same computation" in (same_problem(trace(relaid, "relaid"), bench) or "")
    other = source.replace("return A * s", "return A * s + 1.0")
    assert same_problem(trace(other, "other"), bench) is None


def test_trace_records_ops_and_shapes() -> None:
    source = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1).sum(dim=0)

def get_inputs():
    return [torch.randn(4096, 8192)]

def get_init_inputs():
    return []
'''
    chain = trace(source)
    assert chain.ops == ("_softmax", "sum")
    assert chain.input_shapes == ((4096, 8192),)
