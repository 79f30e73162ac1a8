"""Region generation: in region mode one candidate is the framework's program around the kernels the model
writes, one per region the ambition offers.

The framework traces the task, cuts it into regions, offers some by ambition and renders each contract;
the model writes only kernel bodies (nodes.region_writer: local lint + NVRTC, repairs sampled with
temperature). Sample 0 is greedy and the others sample cooler than whole programs (greedy scored best in
the probe). From the second round on, each region follows its route from triage (nodes.region_triage):
kept where the GPU host found it right, repaired from what the GPU said where it was wrong, and, once the
whole candidate is strictly correct, its costliest region rewritten for speed ("fast second"). The
program is the evaluator's region kind (regions.export with NVRTC), and the job line carries
the regions so each kernel is also judged alone.
"""

from __future__ import annotations

import functools
from typing import Any

from evaluator.problem import problem_from_dict
from nodes.context import Context
from nodes.prompt_files import fragment
from nodes.region_writer import RegionAttempt, write_region
from nodes.shape_choice import ShapeChoice, choose_shape
from nodes.state import SampleInput, event
from regions.check import check
from regions.contract import Contract
from regions.export import Written, export_program, region_markers
from regions.model import Region, RegionError
from regions.offering import choose, contracted, cut
from regions.partition import costliest
from regions.shapes import FIRST, moves_unchanged, shaped, shapes_for
from regions.shares import profile_shares
from regions.trace import trace_problem
from regions.twins import rename_body, twin_key

# Samples after the greedy one; in the probe, T = 0.7 scored 8.75/20 a sample where greedy scored 14/20.
SAMPLE_TEMPERATURE = 0.5


@functools.lru_cache(maxsize=16)
def _contracted(source: str, ambition: str) -> tuple[list[Region], list[tuple[Region, Contract]], list[str]]:
    """The cut, the regions a contract fits with theirs, why the others have none (cached: read only)."""
    problem = problem_from_dict({"name": "task", "level": 0, "problem_id": 0, "source": source})
    regions = cut(trace_problem(problem), ambition)
    fit, unfit = contracted(regions)
    return regions, fit, unfit


def offered(
    source: str, ambition: str, profile: dict[str, Any] | None = None
) -> tuple[list[tuple[Region, Contract]], dict[str, float]]:
    """The regions the ambition offers in this problem with their contracts, and each region's share of
    the reference's measured time where `profile` has rows (the costliest region is then the measured
    one); RegionError says why none. A region no contract fits yet is left to PyTorch like a kept one:
    the others are still offered (regions.offering)."""
    regions, fit, unfit = _contracted(source, ambition)
    shares = profile_shares(regions, (profile or {}).get("rows") or [])  # kept ops claim their rows too
    chosen = choose(fit, ambition, shares)
    if not chosen:
        why = f": {'; '.join(unfit)}" if unfit else ""
        raise RegionError(f"no region is offered at ambition {ambition}{why}")
    return chosen, shares


def generate_regions(inp: SampleInput, ctx: Context, seed: int) -> dict[str, Any]:
    """One region candidate for this sample; RegionError when the task cannot be done in region mode (the
    caller writes a whole program instead)."""
    if ctx.backend != "cuda":
        raise RegionError("region kernels need CUDA; the cpu backend judges whole C++ programs")
    task, round_, sample = inp["task"], inp.get("round", 0), inp["sample"]
    profile = inp.get("profile") or {}
    parts, shares = offered(task["source"], ctx.ambition, profile)
    notes = _planned(inp.get("plan"))
    if notes:  # the agent's analysis chose among the offered regions
        parts = [(region, contract) for region, contract in parts if region.id in notes] or parts
    routes = _routes(inp.get("feedback"), inp.get("last"))
    # Greedy once: a later round's greedy answer to the same prompt would only repeat it.
    temperature = 0.0 if (sample, round_) == (0, 0) else min(ctx.temperature, SAMPLE_TEMPERATURE)
    written: list[Written] = []
    attempts: dict[str, RegionAttempt] = {}
    twins: dict[tuple[str, str, str], tuple[str, list[str], str]] = {}  # written once, renamed for twins
    reused: dict[str, str] = {}  # region id -> the twin whose body it took
    shaped: dict[str, str] = {}  # region id -> the launch shape it runs on, where not the first contract's
    choices: dict[str, ShapeChoice] = {}  # region id -> the shape the model chose for it this round
    shapes_before = (inp.get("last") or {}).get("shapes")
    for k, (region, first) in enumerate(parts):
        route, text, before = routes.get(region.id, ("fresh", "", None))
        contract, moved, choice = _shape(
            region, first, route, text, before, shapes_before, ctx, seed + 100 * k
        )
        if choice is not None:
            choices[region.id] = choice
        if moved:
            shaped[region.id] = moved
        new = bool(moved) and (shapes_before or {}).get(region.id) != moved
        if new and moves_unchanged(before or "") and check(contract, before or "").ok:
            # the fast second's move: the correct body, unchanged, on the shape the model chose
            written.append(Written(region, contract, before))
            continue
        if route == "keep":  # right on the GPU last round: kept as it was
            written.append(Written(region, contract, before))
            continue
        key, names = twin_key(region)
        twin = (key, route, rename_body(before or "", names, [f"@{i}" for i in range(len(names))]))
        if twin in twins and route != "optimise":
            source_id, source_names, body = twins[twin]
            copy = check(contract, rename_body(body, source_names, names))
            if copy.ok:
                written.append(Written(region, contract, copy.body))
                reused[region.id] = source_id
                continue
        attempt = write_region(
            contract,
            temperature=temperature,
            seed=seed + 100 * k,
            ambition=ctx.ambition,
            prompts=ctx.prompts,
            previous=(before or "", text) if route in ("compile", "values", "fault") else None,
            optimise=(before, text) if route == "optimise" else None,
            context=_context(
                shares.get(region.id),
                profile.get("device"),
                notes.get(region.id, ""),
                [e["text"] for e in inp.get("examples") or [] if e.get("region") == region.id],
            ),
        )
        attempts[region.id] = attempt
        # A rewrite that fails the local checks is not worth a GPU run: the correct body stands, on the
        # contract it was correct on.
        if route == "optimise" and not attempt.ok:
            if new:  # moved this round: the rewrite for the chosen shape failed
                contract = first
                shaped.pop(region.id)
            written.append(Written(region, contract, before))
        else:
            written.append(Written(region, contract, attempt.body))
        if attempt.ok:
            twins.setdefault(twin, (region.id, names, attempt.body))
    problem = problem_from_dict(task)
    code = export_program(problem, written, "nvrtc")
    answers = "\n\n".join(f"// region {rid}\n{a.history[-1]['answer']}" for rid, a in attempts.items())
    candidate = {
        "id": f"r{round_}s{sample}",
        "round": round_,
        "sample": sample,
        "format": "regions",
        "completion": answers,
        "code": code,
        "regions": region_markers(written),
        "bodies": {w.region.id: w.body for w in written},
        "region_ops": {w.region.id: list(dict.fromkeys(s.target for s in w.region.steps)) for w in written},
        "costliest": costliest([region for region, _ in parts], shares).id,
        "shapes": shaped,
        "local_ok": all(a.ok for a in attempts.values()),
        "shape_choices": {
            rid: {"shape": c.shape, "why": c.why, "valid": c.valid} for rid, c in choices.items()
        },
        "prompt_tokens": sum(a.prompt_tokens for a in attempts.values())
        + sum(c.prompt_tokens for c in choices.values()),
        "completion_tokens": sum(a.completion_tokens for a in attempts.values())
        + sum(c.completion_tokens for c in choices.values()),
        "seconds": round(
            sum(a.seconds for a in attempts.values()) + sum(c.seconds for c in choices.values()), 3
        ),
    }
    last_prompt = next((a.messages[-1] for a in reversed(attempts.values()) if a.messages), None)
    last_prompt = last_prompt or next((c.messages for c in choices.values() if c.messages), None)
    trace = event(
        "generate",
        round_,
        sample=sample,
        seconds=candidate["seconds"],
        messages=last_prompt,
        completion=answers,
        prompt_tokens=candidate["prompt_tokens"],
        completion_tokens=candidate["completion_tokens"],
        inputs={
            "format": "regions",
            "seed": seed,
            "temperature": temperature,
            "regions": [w.region.id for w in written],
            "routes": {rid: r[0] for rid, r in routes.items()},
            "profile_shares": {rid: round(v, 4) for rid, v in shares.items()} or None,
        },
        outputs={
            "local_ok": candidate["local_ok"],
            "answers": {rid: a.rounds for rid, a in attempts.items()},
            "kept": sorted(
                w.region.id for w in written if w.region.id not in attempts and w.region.id not in reused
            ),
            "twins": reused,
            "shapes": shaped,
            "shape_choices": candidate["shape_choices"],
            "errors": {rid: a.errors for rid, a in attempts.items() if not a.ok},
        },
    )
    return {"pending": [candidate], "events": [trace]}


def _shape(
    region: Region,
    first: Contract,
    route: str,
    timing: str,
    before: str | None,
    shapes: dict[str, str] | None,
    ctx: Context,
    seed: int,
) -> tuple[Contract, str, ShapeChoice | None]:
    """The contract a region is written against this round, the launch shape it runs on ("" for its
    first contract's) and, where the model was asked this round, its choice.

    When the fast second picks a region still on its first contract, the model chooses among the launch
    shapes that fit the region (nodes.shape_choice; the framework writes each shape's launch code). A
    correct body that reads only through the accessors moves to the chosen shape unchanged, with no
    rewrite; otherwise the model rewrites its lines for the chosen shape. "first" keeps the launch and
    asks for faster lines. Once moved, the region stays on its shape while it is right or being made
    faster (later rewrites target that shape); if the GPU finds it wrong there, it is repaired on its
    first contract. Select keeps a move only if it is strictly correct and faster."""
    on = (shapes or {}).get(region.id, "")
    if on and route in ("keep", "optimise"):
        try:
            return shaped(region, on), on, None
        except RegionError:
            return first, "", None
    if on or route != "optimise":
        return first, "", None
    menu = shapes_for(region)
    if not menu:
        return first, "", None
    choice = choose_shape(
        region,
        before or "",
        timing,
        [shape for shape, _ in menu],
        prompts=ctx.prompts,
        ambition=ctx.ambition,
        seed=seed,
    )
    if choice.shape == FIRST:
        return first, "", choice
    contract = next(c for shape, c in menu if shape.name == choice.shape)
    return contract, choice.shape, choice


def _planned(plan: dict[str, Any] | None) -> dict[str, str]:
    """Region id -> its plan line, from a region-mode analysis (nothing from a program plan or none)."""
    if not plan or plan.get("format") != "regions":
        return {}
    return {str(p["id"]): str(p.get("plan") or "") for p in plan.get("regions") or []}


def _context(share: float | None, device: str | None, plan: str, examples: list[str]) -> str:
    """What the prompt carries under the region's facts: its measured weight (profiling_guided's profile),
    the analysis's plan line and kernel-only examples of its kind (the agent); nothing without them."""
    parts = []
    if share is not None:
        values = {"percent": f"{100 * share:.0f}", "device": device or "the profiled device"}
        parts.append(fragment("region/share", values))
    if plan:
        parts.append(fragment("region/plan", {"plan": plan}))
    parts += [fragment("region/example", {"example": text}) for text in examples]
    return "\n\n".join(parts)


def _routes(feedback: dict[str, Any] | None, last: dict[str, Any] | None) -> dict[str, tuple[str, str, Any]]:
    """Region id -> (route, what triage said, its body last round), from the region triage of the last
    candidate (nodes.region_triage); nothing in the first round or after a whole-program candidate."""
    if not feedback or feedback.get("source") != "regions" or not last or last.get("format") != "regions":
        return {}
    bodies = last.get("bodies") or {}
    return {
        rid: (r["route"], r.get("text", ""), bodies[rid])
        for rid, r in (feedback.get("regions") or {}).items()
        if rid in bodies
    }
