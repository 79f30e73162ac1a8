"""Regions' shares of the reference's measured time, from an op-level profile (evaluator.profile's rows).

A profile row is an ATen op with its share of the forward's device time; a region step is the functional
call the trace saw. They meet by name: `torch.nn.functional.gelu` is `aten::gelu`, `torch.matmul` runs as
`aten::matmul`, `aten::mm` or `aten::addmm`, a convolution as `aten::convolution` or cuDNN's. Each call of a
row goes to the first step, in graph order, of its op that no call has taken yet, so two regions with an
`add` each take one call of `aten::add` each. A step the trace decomposed (a batch norm's subtract, add and
rsqrt) answers to the op it came from, as the profile names it (`aten::batch_norm`), not to a residual's
`aten::add_`; to its own name only where the profile never names that op (a loss PyTorch runs as its parts).
What no step takes (a kept op, a copy) stays unclaimed: the shares need not sum to 1. Approximate by design;
it ranks regions, it does not time them.
"""

from __future__ import annotations

from typing import Any

from regions.model import Region

# A step's base name -> the ATen ops it can run as, besides aten::<base> itself.
_RUNS_AS: dict[str, tuple[str, ...]] = {
    "matmul": ("mm", "bmm", "addmm", "baddbmm"),
    "mm": ("matmul", "addmm"),
    "bmm": ("matmul", "baddbmm"),
    "linear": ("addmm", "mm", "matmul"),
    "conv1d": ("convolution", "_convolution", "cudnn_convolution"),
    "conv2d": ("convolution", "_convolution", "cudnn_convolution"),
    "conv3d": ("convolution", "_convolution", "cudnn_convolution"),
    "conv_transpose1d": ("convolution", "_convolution", "cudnn_convolution_transpose"),
    "conv_transpose2d": ("convolution", "_convolution", "cudnn_convolution_transpose"),
    "conv_transpose3d": ("convolution", "_convolution", "cudnn_convolution_transpose"),
    "softmax": ("_softmax",),
    "log_softmax": ("_log_softmax",),
    "layer_norm": ("native_layer_norm",),
    "batch_norm": ("native_batch_norm", "_batch_norm_impl_index", "cudnn_batch_norm"),
    "instance_norm": ("batch_norm", "native_batch_norm", "_batch_norm_impl_index", "cudnn_batch_norm"),
    "group_norm": ("native_group_norm",),
    "cross_entropy": ("cross_entropy_loss", "_log_softmax", "log_softmax", "nll_loss", "nll_loss_forward"),
    "scaled_dot_product_attention": (
        "_scaled_dot_product_flash_attention",
        "_scaled_dot_product_efficient_attention",
        "_scaled_dot_product_cudnn_attention",
    ),
    "einsum": ("bmm", "mm", "matmul"),
    "max": ("amax",),
    "min": ("amin",),
}


def _op(row: dict[str, Any]) -> str:
    return str(row.get("op", "")).removeprefix("aten::").rstrip("_")


def _names(target: str) -> set[str]:
    base = target.rsplit(".", 1)[-1].rstrip("_")
    return {base, *(_RUNS_AS.get(base, ()))}


def profile_shares(
    regions: list[Region], rows: list[dict[str, Any]], origins: dict[str, str] | None = None
) -> dict[str, float]:
    """Region id -> the share of the profile it claims (regions that claim none are left out, so callers
    fall back to their own estimate for them). A row of `calls` calls is split evenly over that many steps
    of its op, taken in graph order. `origins` (Traced.origins): step output name -> `op:instance` of the op
    the trace decomposed it from; one call of that op is all of that instance's steps, split evenly."""
    ops = {_op(row) for row in rows}
    units: dict[str, tuple[set[str], list[str]]] = {}  # one call's worth: its names, a region id per step
    for region in regions:
        for step in region.steps:
            origin = (origins or {}).get(step.out.name, "")
            names = _names(origin.partition(":")[0]) if origin else set()
            if names & ops:
                units.setdefault(origin, (names, []))[1].append(region.id)
            else:
                units[f"{region.id}/{step.out.name}"] = (_names(step.target), [region.id])
    free = list(units.values())
    shares: dict[str, float] = {}
    for row in rows:
        op = _op(row)
        calls = max(1, int(row.get("calls") or 1))
        share = float(row.get("share") or 0.0) / calls
        for _ in range(calls):
            hit = next((k for k, (names, _) in enumerate(free) if op in names), None)
            if hit is None:
                break
            _, ids = free.pop(hit)
            for rid in ids:
                shares[rid] = shares.get(rid, 0.0) + share / len(ids)
    return shares
