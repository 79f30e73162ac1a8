"""What a region draft works on, read off its state: the regions its cut offers with their contracts
(narrowed to the agent's plan), each region's route from triage, and what its prompt carries besides the
contract. The region writer's steps (nodes.region_generation) read them; none of them writes state."""

from __future__ import annotations

from typing import Any

from nodes.context import Context
from nodes.generation import ambition_of
from nodes.prompt_files import fragment
from nodes.state import RegionDraft
from regions.contract import Contract
from regions.model import Region, RegionError
from regions.offering import offered
from regions.shapes import shaped


def offered_parts(state: RegionDraft, ctx: Context) -> tuple[list[tuple[Region, Contract]], dict[str, float]]:
    """The offered regions with their first contracts (narrowed to the agent's plan where it chose among
    them), and each region's measured share of the reference's time where profiled."""
    parts, shares = offered(state["task"]["source"], ambition_of(state, ctx), state.get("profile") or {})
    notes = planned(state.get("plan"))
    if notes:
        parts = [(region, contract) for region, contract in parts if region.id in notes] or parts
    return parts, shares


def same_cut(state: RegionDraft, ctx: Context, offer: list[tuple[Region, Contract]]) -> bool:
    """Whether this branch's cut (not the lead) offers exactly the regions and contracts the lead cut
    offers, so its candidate would be the lead's written again (a level-1 product is one region in both)."""
    if ambition_of(state, ctx) == ctx.lead:
        return False
    try:
        return offer == offered_parts({**state, "ambition": ctx.lead}, ctx)[0]
    except RegionError:
        return False


def regions_by_id(state: RegionDraft, ctx: Context) -> list[tuple[str, tuple[Region, Contract]]]:
    return [(region.id, (region, contract)) for region, contract in offered_parts(state, ctx)[0]]


def contract_on(region: Region, first: Contract, shape_: str) -> Contract:
    """The region's contract on its launch shape ("" for its first contract)."""
    return shaped(region, shape_) if shape_ else first


def route_of(state: RegionDraft, rid: str) -> tuple[str, str, str | None]:
    route, text, before = state["routes"].get(rid, ("fresh", "", None))
    return route, text, before


def planned(plan: dict[str, Any] | None) -> dict[str, str]:
    """Region id -> its plan line, from a region analysis (nothing from a program plan or none)."""
    return {str(p["id"]): str(p.get("plan") or "") for p in (plan or {}).get("regions") or []}


def prompt_context(state: RegionDraft, ctx: Context, region: Region) -> str:
    """What the prompt carries under the region's facts: its measured weight (profiling_guided's profile),
    the analysis's plan line and kernel-only examples of its kind (the agent); nothing without them."""
    profile = state.get("profile") or {}
    share = offered_parts(state, ctx)[1].get(region.id)
    plan = planned(state.get("plan")).get(region.id, "")
    examples = [e["text"] for e in state.get("examples") or [] if e.get("region") == region.id]
    parts = []
    if share is not None:
        values = {"percent": f"{100 * share:.0f}", "device": profile.get("device") or "the profiled device"}
        parts.append(fragment("region/share", values))
    if plan:
        parts.append(fragment("region/plan", {"plan": plan}))
    parts += [fragment("region/example", {"example": text}) for text in examples]
    return "\n\n".join(parts)


def routes_from(feedback: dict[str, Any] | None, last: dict[str, Any] | None) -> dict[str, list[Any]]:
    """Region id -> [route, what triage said, its body last round], from the region triage of the last
    candidate (nodes.region_triage); nothing in the first round or after a whole-program candidate."""
    if not feedback or feedback.get("source") != "regions" or not last or "bodies" not in last:
        return {}
    bodies = last["bodies"]
    return {
        rid: [r["route"], r.get("text", ""), bodies[rid]]
        for rid, r in (feedback.get("regions") or {}).items()
        if rid in bodies
    }


def failed_regions(state: RegionDraft) -> set[str]:
    """The regions PyTorch runs in this candidate: each whose written body failed the local checks once its
    repairs were spent, and the twins renamed from one. A body NVRTC refuses makes the whole program a
    compile error on the GPU (measured: a Python line in a GoogleNet convolution body); without it
    the other kernels are judged. Where every region failed, all are sent, so the GPU's words on them are
    the next round's feedback."""
    attempts = state["attempts"].items()
    failed = {rid for rid, a in attempts if not a["ok"] and state["written"][rid]["body"] == a["body"]}
    left = failed | {rid for rid, source in state["reused"].items() if source in failed}
    return set() if left >= set(state["order"]) else left
