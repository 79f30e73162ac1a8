"""Twin regions: regions whose contracts are the same up to their tensors' names (a ResNet's batch norms
and ReLUs at one shape: ResNet101 offers about 100 map regions at moderate ambition, in a handful of shapes).

The model writes a twin's body once per candidate; the framework renames it for every other twin, and the
local checks judge each renamed copy like any body. A twin cannot compute anything else: its contract,
rendered with neutral names, is the same text.
"""

from __future__ import annotations

from dataclasses import replace

from regions.contract import render
from regions.model import Region, TensorInfo
from regions.skeleton import c_names, renamed


def twin_key(region: Region) -> tuple[str, list[str]]:
    """The contract of the region with neutral names (its identity among twins), and the C names of its
    inputs in signature order (what a twin's body is renamed from and to)."""
    mapping = {t.name: f"kg_in{i}" for i, t in enumerate(region.inputs)}
    mapping |= {s.out.name: f"kg_step{k}" for k, s in enumerate(region.steps)}

    def tensor(t: TensorInfo) -> TensorInfo:
        return replace(t, name=mapping.get(t.name, t.name))

    steps = [
        replace(
            s,
            out=tensor(s.out),
            args=tuple(mapping.get(a, a) for a in s.args),
            kwargs=tuple((k, mapping.get(v, v) if isinstance(v, str) else v) for k, v in s.kwargs),
            code=renamed(s.code, mapping),
        )
        for s in region.steps
    ]
    neutral = replace(
        region,
        id="twin",
        nodes=[],
        inputs=[tensor(t) for t in region.inputs],
        output=tensor(region.output),
        steps=steps,
    )
    return render(neutral).facts, [c_names(region)[t.name] for t in region.inputs]


def rename_body(body: str, source: list[str], target: list[str]) -> str:
    """A twin's body with the source region's input names turned into the target's, in one pass (a name
    after a dot, e.g. blockIdx.x, is a member, not an input)."""
    return renamed(body, dict(zip(source, target, strict=True)))
