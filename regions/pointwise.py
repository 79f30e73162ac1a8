"""The map kind's skeleton: one thread per output element (grid-stride), the output index unravelled,
every input loaded at that element's broadcast index before the body; the model writes one line per step,
the framework stores the last step's value. `preloaded` also serves a fused product's epilogue and the
vectorised launch shape (regions.shapes)."""

from __future__ import annotations

from regions.library import PRELUDE
from regions.model import Region, RegionError, TensorInfo
from regions.skeleton import (
    BODY_MARK,
    Contract,
    facts_text,
    launch_info,
    loop_head,
    role_lines,
    signature_line,
    step_code,
)


def map_contract(region: Region, names: dict[str, str]) -> Contract:
    out = region.output
    kernel = f"region_{region.id}"
    pointers = [names[t.name] for t in region.inputs]
    scalars = [names[s] for s, _ in region.scalars]
    sig = signature_line(kernel, pointers, "out", scalars, ["n"])
    dims, loads = preloaded(region.inputs, out.shape, names, "    ")
    last = f"t{len(region.steps)}"
    todo = "\n".join(f"        // {step_code(s, names)}" for s in region.steps)
    head = (
        f"{PRELUDE}\n{sig} {{\n{dims}{loop_head('n')}{loads}"
        + f"        // one line per step, in order:\n{todo}\n{BODY_MARK}"
    )
    tail = f"        p_out[i] = {last};\n    }}\n}}\n"
    roles = role_lines(
        region, names, {t.name: " (loaded at this element: use the value)" for t in region.inputs}
    )
    lines = "`float t1 = ...;`" + (f" to `float {last} = ...;`, one line per step" if last != "t1" else "")
    roles.insert(0, f"- each thread computes element i of out (shape {list(out.shape)}); write {lines}")
    contract = Contract(region.id, "map", kernel, sig, head, tail, "", launch_info(region, kernel, out.numel))
    contract.facts = facts_text(region, names, head, roles)
    return contract


def preloaded(
    tensors: list[TensorInfo], shape: tuple[int, ...], names: dict[str, str], indent: str, rest: str = "rest"
) -> tuple[str, str]:
    """Each tensor loaded at output element i's broadcast index: the dim constants the index needs
    (indented by `indent`: the caller places them) and the lines that unravel i and load the values."""
    needs: set[int] = set()
    offsets = [_broadcast_offset(t.shape, shape, needs) for t in tensors]
    loads = "".join(
        f"        const float {names[t.name]} = p_{names[t.name]}[{at}];\n"
        for t, at in zip(tensors, offsets, strict=True)
    )
    dims = "".join(
        f"{indent}const int64_t D{k} = {shape[k]};\n"
        for k in range(1, len(shape))
        if needs and k >= min(needs)
    )
    return dims, _unravel(shape, needs, rest) + loads


def _unravel(shape: tuple[int, ...], needs: set[int], rest: str = "rest") -> str:
    """Coordinates of element i, only those some broadcast input needs (innermost first)."""
    if not needs:
        return ""
    lines, lowest = [f"        int64_t {rest} = i;"], min(needs)
    for k in range(len(shape) - 1, lowest - 1, -1):
        if k == 0:
            lines.append(f"        const int64_t c0 = {rest};")
        elif k == lowest:
            lines.append(f"        const int64_t c{k} = {rest} % D{k};")
        elif k in needs:
            lines.append(f"        const int64_t c{k} = {rest} % D{k}; {rest} /= D{k};")
        else:
            lines.append(f"        {rest} /= D{k};")
    return "\n".join(lines) + "\n"


def _broadcast_offset(shape: tuple[int, ...], out: tuple[int, ...], needs: set[int]) -> str:
    """The flat index of this input at output element i (broadcast dims read index 0)."""
    if tuple(shape) == tuple(out):
        return "i"
    lead = len(out) - len(shape)
    if lead < 0:
        raise RegionError(f"an input of shape {shape} does not broadcast to {out}")
    terms, stride = [], 1
    for k in range(len(shape) - 1, -1, -1):
        if shape[k] != 1:
            if shape[k] != out[lead + k]:
                raise RegionError(f"an input of shape {shape} does not broadcast to {out}")
            needs.add(lead + k)
            terms.append(f"c{lead + k}" + (f" * {stride}" if stride != 1 else ""))
        stride *= shape[k]
    return " + ".join(reversed(terms)) or "0"
