"""A fused region's pointwise epilogue (aggressive ambition): the steps after its core op, computed in the
core's kernel at each of its output elements, so the core's output never makes a round trip through memory.

The core is the region's first step: a product, a pooling window or a reduction to one value per row. Its
skeleton is the one it has alone, but for who computes the core's value: in a fused region the product's
sum, the window's or reduction's fold (loop nest and combine rule) is the framework's, and the body writes
only the steps (measured: told to sum or fold and then write the steps, the 1.5B wrote the steps alone,
three answers running, on every fused product, window and mean it was given). The epilogue adds the
operands of its steps, loaded at this output element before the body, and one line per step after the
core's value, which the steps read by the name `value` gives (`result`, or `pooled` / `reduced` where
the framework finishes the fold: an average's divisor, a mean's division). The framework stores the last
step.
Inductor's rule is the anchor: pointwise work joins the kernel whose output it reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from regions.model import Region
from regions.pointwise import preloaded
from regions.skeleton import step_code


@dataclass
class Epilogue:
    """What a core's skeleton gains from its fused epilogue: the whole region (the signature and the
    launch read all of its inputs), the name of the core's value, the operands' loads, the steps to write,
    the name stored, the role notes of the operands, the role line's tail (what the body writes after the
    core's value), and the operands' names. The empty one, `Epilogue(region)`, is a core alone."""

    region: Region
    value: str = "result"  # the name the steps read the core's value by
    loads: str = ""
    todo: str = ""
    last: str = "result"
    notes: dict[str, str] = field(default_factory=dict)
    then: str = ""
    # the inputs the body itself must read: the operands' C names where the core's value is the
    # framework's (fused), None for a core alone (every input of its signature)
    reads: list[str] | None = None


def split(region: Region, names: dict[str, str], value: str) -> tuple[Region, dict[str, str], Epilogue]:
    """The core (the first step alone, with the inputs it reads), the names with the core's output read
    as `value` and the epilogue's steps renumbered t1, t2, ..., and the epilogue."""
    core_step, *steps = region.steps
    read = set(core_step.args) | {str(v) for _, v in core_step.kwargs}
    own = [t for t in region.inputs if t.name in read]
    core = Region(region.id, region.kind, region.nodes[:1], own, core_step.out, [core_step])
    names = step_names(region, names, value)
    operands = [t for t in region.inputs if t not in own]
    dims, loads = preloaded(operands, region.output.shape, names, "        ", rest="e")
    last = f"t{len(steps)}"
    epilogue = Epilogue(
        region,
        value,
        loads=dims + loads,
        todo="        // then one line per step, in order:\n"
        + "".join(f"        // {step_code(s, names)}\n" for s in steps),
        last=last,
        notes={t.name: " (loaded at this element: use the value)" for t in operands},
        reads=[names[t.name] for t in operands],
        then=f"; then write `float t1 = ...;`{f' to `float {last} = ...;`' if last != 't1' else ''} "
        f"from {'it' if value == 'result' else f'`{value}`'}, one line per step",
    )
    return core, names, epilogue


def step_names(region: Region, names: dict[str, str], value: str) -> dict[str, str]:
    """The C names of a fused region: its core's output read as `value`, the steps after it t1, t2, ..."""
    core_step, *steps = region.steps
    return {**names, core_step.out.name: value, **{s.out.name: f"t{k}" for k, s in enumerate(steps, 1)}}
