"""Region generation: the steps of the generate subgraph in region mode, one candidate per sample.

The framework offers regions by ambition and writes everything but each kernel's body (regions.offering,
regions.assemble); the model writes bodies. The steps, each a node Studio draws and traces:
- offer: the regions this sample writes, each one's route from triage (nodes.region_triage) and the
  sampling temperature (sample 0 greedy, the others cooler than whole programs: greedy scored best in the
  probe); a task region mode cannot do goes to the whole-program writer instead; under autotune, a cut
  that offers the lead cut's regions ends here (its candidate would be the lead's again);
- prepare: the framework gives every body it can without the model (kept where the GPU found it right,
  moved unchanged to a new launch shape, renamed from a twin) and stops at the next region the model must
  write;
- shape: the fast second's launch-shape choice (nodes.shape_choice);
- write: the model's first answer for the region; check: the local checks (lint + NVRTC, then the CPU
  emulation on the problem shrunk; no GPU); repair: a sampled repair of a failed answer with the error
  line or the first wrong value, up to REPAIRS times;
- assemble: the program and job-line markers (regions.assemble), the candidate and its trace event.
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.graph import END
from langgraph.runtime import Runtime

from nodes.context import Context, settings
from nodes.generation import ambition_of, candidate_id, sample_seed
from nodes.model.llm import Completion, shared_model
from nodes.region_parts import (
    contract_on,
    failed_regions,
    offered_parts,
    prompt_context,
    regions_by_id,
    route_of,
    routes_from,
    same_cut,
)
from nodes.region_writer import (
    RegionAttempt,
    answer,
    judged_before,
    next_messages,
    opening_messages,
    record,
    refuse_unchanged,
    unchanged_said,
)
from nodes.shape_choice import ShapeChoice, choose_shape
from nodes.state import Candidate, Generated, RegionDraft, event
from regions.assemble import Written, assemble, chosen_launch, launch_for, moved_unchanged, twin_copy, twin_id
from regions.check import check, extract_body, same_code
from regions.contract import Contract
from regions.emulate import judged_on_cpu, small_twin
from regions.model import Region, RegionError
from regions.partition import costliest
from regions.rules import rule_body
from regions.shapes import FIRST, ruled_launch, shapes_for

# Samples after the greedy one; in the probe, T = 0.7 scored 8.75/20 a sample where greedy scored 14/20.
SAMPLE_TEMPERATURE = 0.5
REPAIRS = 2  # local repair rounds after a region's first answer (the last asks anew)
FRESH_ROUND = 2  # from this (0-based) round on, a body the GPU found wrong is no longer shown
_REPAIRS = ("compile", "values", "fault")  # triage routes that repair a body the GPU judged wrong


def offer(state: RegionDraft, runtime: Runtime[Context]) -> dict[str, Any]:
    """The regions this sample writes and how; `fallback` says why region mode cannot do the task."""
    ctx = settings(runtime)
    if ctx.backend != "cuda":
        reason = "region kernels need CUDA; the cpu backend judges whole C++ programs"
        return {"fallback": f"region mode unavailable, a whole program instead: {reason}"}
    try:
        parts, _ = offered_parts(state, ctx)
    except RegionError as exc:
        return {"fallback": f"region mode unavailable, a whole program instead: {exc}"}
    round_, sample = state.get("round", 0), state["sample"]
    if same_cut(state, ctx, parts):  # autotune: this cut offers the lead cut's regions, written already
        said = {"ambition": ambition_of(state, ctx), "same_as": ctx.lead}
        trace = event(
            "generate", round_, sample=sample, seconds=0.0, inputs={"format": "regions"}, outputs=said
        )
        return {"same_cut": True, "pending": [], "events": [trace]}
    return {
        "seed": sample_seed(ctx, state["task"]["name"], round_, sample),
        # Greedy once: a later round's greedy answer to the same prompt would only repeat it.
        "temperature": 0.0 if (sample, round_) == (0, 0) else min(ctx.temperature, SAMPLE_TEMPERATURE),
        "order": [region.id for region, _ in parts],
        "at": 0,
        "routes": routes_from(state.get("feedback"), state.get("last")),
        "current": None,
        "written": {},
        "twins": {},
        "reused": {},
        "shaped": {},
        "choices": {},
        "attempts": {},
        "last_messages": None,
    }


def after_offer(state: RegionDraft) -> Literal["prepare", "program", "__end__"]:
    if state.get("same_cut"):
        return END
    return "program" if state.get("fallback") else "prepare"


def prepare(state: RegionDraft, runtime: Runtime[Context]) -> dict[str, Any]:
    """Give each region, in order, the body the framework can give without the model; stop at the first
    region the model must write (or choose a launch shape for), or after the last."""
    ctx = settings(runtime)
    parts = dict(regions_by_id(state, ctx))
    before_shapes = ((state.get("last") or {}).get("shapes")) or {}
    written, shaped_now = dict(state["written"]), dict(state["shaped"])
    reused = dict(state["reused"])
    at, current = state["at"], state.get("current")
    while at < len(state["order"]):
        rid = state["order"][at]
        region, first = parts[rid]
        route, _, before = route_of(state, rid)
        if current and current["id"] == rid and "shape" in current:  # the model chose its launch
            shape = current["shape"]
        else:
            launch = launch_for(region, first, route, before_shapes.get(rid, ""))
            if launch is None:
                return _stop(written, shaped_now, reused, at, {"id": rid})  # the model chooses first
            shape = launch[1]
        contract = contract_on(region, first, shape)
        if shape:
            shaped_now[rid] = shape
        new = bool(shape) and before_shapes.get(rid) != shape
        if (new and moved_unchanged(contract, before)) or route == "keep":
            # the fast second's move (the correct body, unchanged, on the chosen shape), or kept as it was
            written[rid] = {"body": before or "", "shape": shape}
            at, current = at + 1, None
            continue
        twin, names = twin_id(region, route, before)
        if twin in state["twins"] and route != "optimise":
            copy = twin_copy(contract, names, state["twins"][twin])
            if copy is not None:
                written[rid] = {"body": copy, "shape": shape}
                reused[rid] = state["twins"][twin]["region"]
                at, current = at + 1, None
                continue
        current = {"id": rid, "shape": shape, "new": new, "twin": twin, "names": names}
        return _stop(written, shaped_now, reused, at, current)
    return _stop(written, shaped_now, reused, at, None)


def after_prepare(state: RegionDraft) -> Literal["shape", "write", "assemble"]:
    current = state.get("current")
    if current is None:
        return "assemble"
    return "write" if "twin" in current else "shape"


def shape(state: RegionDraft, runtime: Runtime[Context]) -> dict[str, Any]:
    """The fast second: the model chooses how the region is launched, from the shapes that fit it."""
    ctx = settings(runtime)
    rid = state["current"]["id"]
    region, first = dict(regions_by_id(state, ctx))[rid]
    if ctx.writer == "rules":  # the plain skeleton: the rules write no other launch shape
        return {"current": {"id": rid, "shape": chosen_launch(region, first, FIRST)[1]}}
    _, timing, before = route_of(state, rid)
    # where the framework ran the body on its ruled shape, that launch is kept and the lines rewritten:
    # it is the first of RULED that fits, and every other shape that fit beside it was measured slower
    # (benchmarks/results/autotune_interleaved: tiled 0.12-0.24x eager where blocked ran 0.57-0.63x)
    on = ((state.get("last") or {}).get("ruled") or {}).get(rid, "")
    choice = (
        ShapeChoice(FIRST, f"it runs on its ruled launch, {on}; the lines are rewritten", True)
        if on
        else choose_shape(
            region,
            before or "",
            timing,
            [s for s, _ in shapes_for(region)],
            prompts=ctx.prompts,
            ambition=ambition_of(state, ctx),
            seed=state["seed"] + 100 * state["order"].index(rid),
        )
    )
    chosen = chosen_launch(region, first, choice.shape)[1]
    record_ = {
        "shape": choice.shape,
        "why": choice.why,
        "valid": choice.valid,
        "prompt_tokens": choice.prompt_tokens,
        "completion_tokens": choice.completion_tokens,
        "seconds": choice.seconds,
        "messages": choice.messages,
    }
    return {"current": {"id": rid, "shape": chosen}, "choices": {**state["choices"], rid: record_}}


def write(state: RegionDraft, runtime: Runtime[Context]) -> dict[str, Any]:
    """The model's first answer for the current region: a body, a repair of what the GPU found wrong, or
    a faster rewrite of a correct body."""
    ctx = settings(runtime)
    rid = state["current"]["id"]
    region, first = dict(regions_by_id(state, ctx))[rid]
    route, text, before = route_of(state, rid)
    if ctx.writer == "rules":
        return _by_rule(state, region, contract_on(region, first, state["current"]["shape"]))
    # A body the GPU found wrong is shown with what it said once; after that repair failed too, the model
    # is asked anew (sampled) without the wrong lines it would copy.
    shown = route in _REPAIRS and state.get("round", 0) < FRESH_ROUND
    messages = opening_messages(
        contract_on(region, first, state["current"]["shape"]),
        ambition=ambition_of(state, ctx),
        prompts=ctx.prompts,
        previous=(before or "", text) if shown else None,
        optimise=(before, text) if route == "optimise" else None,
        context=prompt_context(state, ctx, region),
    )
    return _ask(state, messages, repairing=route in (*_REPAIRS, "optimise"))


def check_answer(state: RegionDraft, runtime: Runtime[Context]) -> dict[str, Any]:
    """The local checks of the latest answer (lint + NVRTC, then the CPU emulation where `emulate` is on;
    no GPU); the region is done once it passes or its repairs are spent."""
    ctx = settings(runtime)
    current = state["current"]
    rid = current["id"]
    region, first = dict(regions_by_id(state, ctx))[rid]
    contract = contract_on(region, first, current["shape"])
    known = state["attempts"].get(rid)
    attempt = RegionAttempt(**known) if known else RegionAttempt("", "", ok=False, errors="", rounds=0)
    reply = Completion(**current["reply"])
    route, text, before = route_of(state, rid)
    # the body the GPU judged wrong, if it was judged on this contract (not on a launch shape left since)
    judged_here = (
        route in _REPAIRS and ((state.get("last") or {}).get("shapes") or {}).get(rid, "") == current["shape"]
    )
    judged = judged_before(attempt, (before or "", text) if judged_here else None)
    result = refuse_unchanged(check(contract, extract_body(reply.text, contract)), judged)
    if ctx.emulate and not current["shape"]:  # a launch shape's threads cooperate: one CPU thread cannot
        result = judged_on_cpu(result, small_twin(state["task"]["source"], region, ambition_of(state, ctx)))
    record(attempt, reply, result)
    attempts = {**state["attempts"], rid: attempt.to_dict()}
    if not attempt.ok and attempt.rounds <= REPAIRS:
        return {"attempts": attempts}
    shape_, shaped_now = current["shape"], dict(state["shaped"])
    body = attempt.body
    if judged_here and before and unchanged_said(attempt) is not None and same_code(body, before):
        # Still the body judged wrong once the repairs are spent: byte for byte, so the program is the one
        # already judged and evaluation takes its verdict instead of judging it again.
        body = before
    if route == "optimise" and not attempt.ok:
        # A rewrite that fails the local checks is not worth a GPU run: the correct body stands, on the
        # contract it was correct on (its first, where it moved this round).
        body = before or ""
        if current["new"]:
            shape_ = ""
            shaped_now.pop(rid, None)
    twins = state["twins"]
    if attempt.ok and current["twin"] not in twins:
        twins = {**twins, current["twin"]: {"region": rid, "names": current["names"], "body": attempt.body}}
    return {
        "attempts": attempts,
        "written": {**state["written"], rid: {"body": body, "shape": shape_}},
        "shaped": shaped_now,
        "twins": twins,
        "at": state["at"] + 1,
        "current": None,
    }


def after_check(state: RegionDraft) -> Literal["repair", "prepare"]:
    return "prepare" if state.get("current") is None else "repair"


def repair(state: RegionDraft, runtime: Runtime[Context]) -> dict[str, Any]:
    """A repair of the failed answer, shown its error line and a caret, sampled with temperature."""
    ctx = settings(runtime)
    rid = state["current"]["id"]
    region, first = dict(regions_by_id(state, ctx))[rid]
    if ctx.writer == "rules":
        return _by_rule(state, region, contract_on(region, first, state["current"]["shape"]))
    attempt = RegionAttempt(**state["attempts"][rid])
    messages = next_messages(
        contract_on(region, first, state["current"]["shape"]),
        attempt,
        ambition=ambition_of(state, ctx),
        prompts=ctx.prompts,
        context=prompt_context(state, ctx, region),
        fresh=attempt.rounds >= REPAIRS,  # the last local repair asks anew
    )
    return _ask(state, messages, repairing=True)


def assemble_candidate(state: RegionDraft, runtime: Runtime[Context]) -> Generated:
    """The candidate: the framework's program around the written bodies, and the trace event."""
    ctx = settings(runtime)
    parts = regions_by_id(state, ctx)
    by_id = dict(parts)
    left = failed_regions(state)  # PyTorch runs them
    written, ruled_now = [], {}
    for rid in (rid for rid in state["order"] if rid not in left):
        (region, first), done = by_id[rid], state["written"][rid]
        # a body on its first contract runs on its kind's ruled shape where it moves there unchanged
        ruled = ruled_launch(region, done["body"]) if not done["shape"] and ctx.launch == "ruled" else None
        if ruled:
            ruled_now[rid] = ruled[0]
        contract = ruled[1] if ruled else contract_on(region, first, done["shape"])
        written.append(Written(region, contract, done["body"]))
    attempts = {rid: RegionAttempt(**a) for rid, a in state["attempts"].items()}
    choices = state["choices"]
    round_, sample = state.get("round", 0), state["sample"]
    answers = "\n\n".join(f"// region {rid}\n{a.history[-1]['answer']}" for rid, a in attempts.items())
    _, shares = offered_parts(state, ctx)
    candidate: Candidate = {
        "id": candidate_id(state, ctx),
        "round": round_,
        "sample": sample,
        "ambition": ambition_of(state, ctx),
        "format": "regions",
        "completion": answers,
        **assemble(state["task"], written, fuse=ctx.fuse),
        "costliest": costliest([region for region, _ in by_id.values()], shares).id,
        "shapes": state["shaped"],
        "ruled": ruled_now,
        "local_ok": all(a.ok for a in attempts.values()),
        "left": sorted(left),
        "shape_choices": {rid: {k: c[k] for k in ("shape", "why", "valid")} for rid, c in choices.items()},
        "prompt_tokens": sum(a.prompt_tokens for a in attempts.values())
        + sum(c["prompt_tokens"] for c in choices.values()),
        "completion_tokens": sum(a.completion_tokens for a in attempts.values())
        + sum(c["completion_tokens"] for c in choices.values()),
        "seconds": round(
            sum(a.seconds for a in attempts.values()) + sum(c["seconds"] for c in choices.values()), 3
        ),
    }
    messages = state.get("last_messages")
    messages = messages or next((c["messages"] for c in choices.values() if c["messages"]), None)
    trace = event(
        "generate",
        round_,
        sample=sample,
        seconds=candidate["seconds"],
        messages=messages,
        completion=answers,
        prompt_tokens=candidate["prompt_tokens"],
        completion_tokens=candidate["completion_tokens"],
        inputs={
            "format": "regions",
            "seed": state["seed"],
            "temperature": state["temperature"],
            "regions": [w.region.id for w in written],
            "routes": {rid: r[0] for rid, r in state["routes"].items()},
            "profile_shares": {rid: round(v, 4) for rid, v in shares.items()} or None,
        },
        outputs={
            "local_ok": candidate["local_ok"],
            "answers": {rid: a.rounds for rid, a in attempts.items()},
            "kept": sorted(
                rid for rid in state["order"] if rid not in attempts and rid not in state["reused"]
            ),
            "twins": state["reused"],
            "shapes": state["shaped"],
            "ruled": ruled_now,
            "shape_choices": candidate["shape_choices"],
            "errors": {rid: a.errors for rid, a in attempts.items() if not a.ok},
        },
    )
    return {"pending": [candidate], "events": [trace]}


def _ask(state: RegionDraft, messages: list[dict[str, str]], *, repairing: bool) -> dict[str, Any]:
    """One model answer for the current region, kept for its local check."""
    current = state["current"]
    rid = current["id"]
    rounds = (state["attempts"].get(rid) or {}).get("rounds", 0)
    reply = answer(
        shared_model(),
        messages,
        temperature=state["temperature"],
        seed=state["seed"] + 100 * state["order"].index(rid),
        round_=rounds,
        repairing=repairing or rounds > 0,
    )
    kept = {k: getattr(reply, k) for k in ("text", "prompt_tokens", "completion_tokens", "seconds")}
    return {"current": {**current, "reply": kept}, "last_messages": messages}


def _by_rule(state: RegionDraft, region: Region, contract: Contract) -> dict[str, Any]:
    """The framework's own body for the current region (regions.rules), as if the model had answered it;
    no rule: an empty answer, which the checks refuse like a reply without code."""
    body = rule_body(region, contract) or ""
    reply = {"text": f"```cuda\n{body}\n```", "prompt_tokens": 0, "completion_tokens": 0, "seconds": 0.0}
    return {"current": {**state["current"], "reply": reply}, "last_messages": []}


def _stop(
    written: dict[str, dict[str, str]],
    shaped_now: dict[str, str],
    reused: dict[str, str],
    at: int,
    current: dict[str, Any] | None,
) -> dict[str, Any]:
    return {"written": written, "shaped": shaped_now, "reused": reused, "at": at, "current": current}
