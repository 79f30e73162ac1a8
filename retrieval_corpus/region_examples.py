"""Kernel-only examples for region mode: a corpus example's region as the model reads a contract (its
PyTorch lines and the kernel so far), with the body that completes it (`region_<id>.cu` beside the example).

The model copies what it is shown (names, shapes, and in whole-program mode the "middle left out" marker
of shortened examples: 31 compile errors), so a region example is a kernel in the very form the model
writes, shown whole, rendered by the same contract code as the task's own regions. Tracing needs torch,
so this module is not part of the stdlib-only corpus loader.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace

from evaluator.problem import problem_from_source
from regions.contract import render
from regions.partition import partition
from regions.skeleton import c_names, renamed
from regions.trace import trace_problem


@dataclass(frozen=True)
class RegionExample:
    """One corpus region with its body: what the retrieval node hands the region writer."""

    example_id: str
    region_id: str
    kind: str
    pytorch: str  # the region's PyTorch lines, as its contract renders them
    kernel: str  # the kernel so far, up to the body marker
    body: str
    names: tuple[str, ...] = ()  # its inputs' C names, in signature order

    def renamed(self, names: list[str]) -> RegionExample:
        """The example in another region's input names, position for position (its PyTorch lines, its
        kernel and its body): a small model copies an example's names into its own kernel, so the example
        is shown in the names the model's own kernel declares. Unchanged when the arities differ."""
        if len(names) != len(self.names) or not names:
            return self
        mapping = dict(zip(self.names, names, strict=True))
        mapping |= {f"p_{a}": f"p_{b}" for a, b in list(mapping.items())}
        return replace(
            self,
            pytorch=renamed(self.pytorch, mapping),
            kernel=renamed(self.kernel, mapping),
            body=renamed(self.body, mapping),
            names=tuple(names),
        )

    def text(self) -> str:
        """The example as the prompt shows it, whole."""
        return (
            f"PyTorch:\n```python\n{self.pytorch}\n```\nThe kernel so far:\n```cuda\n{self.kernel}\n```\n"
            f"The lines written after the marker:\n```cuda\n{self.body.strip()}\n```"
        )


def _section(facts: str, title: str) -> str:
    """The code block under one `## ` heading of a contract's facts."""
    part = facts[facts.index(f"## {title}") :]
    start = part.index("```")
    start = part.index("\n", start) + 1
    return part[start : part.index("```", start)].rstrip("\n")


@functools.lru_cache(maxsize=128)
def region_examples(
    example_id: str, reference: str, bodies: tuple[tuple[str, str], ...]
) -> tuple[RegionExample, ...]:
    """The example's regions that have a body, rendered from its reference (traced once per process)."""
    regions = {r.id: r for r in partition(trace_problem(problem_from_source(reference, name=example_id)))}
    out = []
    for region_id, body in bodies:
        region = regions.get(region_id)
        if region is None:
            raise ValueError(f"{example_id}: region_{region_id}.cu names no region of its reference")
        facts = render(region).facts
        out.append(
            RegionExample(
                example_id=example_id,
                region_id=region_id,
                kind=region.kind,
                pytorch=_section(facts, "The PyTorch code"),
                kernel=_section(facts, "The kernel so far"),
                body=body,
                names=tuple(c_names(region)[t.name] for t in region.inputs),
            )
        )
    return tuple(out)


def from_hit(hit: dict) -> tuple[RegionExample, ...]:
    """The region examples of one search result (a dict from retrieval_corpus.index.search)."""
    bodies = tuple(sorted((hit.get("region_bodies") or {}).items()))
    if not bodies:
        return ()
    return region_examples(str(hit["id"]), str(hit["reference"]), bodies)
