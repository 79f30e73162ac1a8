"""Region generation: in region mode one candidate is the framework's program around the kernels the model
writes, one per region the ambition offers.

The framework traces the task, cuts it into regions, offers some by ambition and renders each contract;
the model writes only kernel bodies (nodes.region_writer: local lint + NVRTC, repairs sampled with
temperature). Sample 0 is greedy and the others sample cooler than whole programs (greedy scored best in
the probe). From the second round on, a region whose own check on the GPU host was right keeps its body;
one that was wrong is repaired from what the GPU said (the element, expected and got), one that crashed
from the error. The program is the evaluator's region kind (evaluator.regions.export with NVRTC), and the
job line carries the regions so each kernel is also judged alone.
"""

from __future__ import annotations

import functools
from typing import Any

from evaluator.problem import problem_from_dict
from evaluator.regions.contract import Contract, render
from evaluator.regions.export import Written, export_program, region_markers
from evaluator.regions.model import Region, RegionError
from evaluator.regions.partition import offer, partition
from evaluator.regions.shares import profile_shares
from evaluator.regions.trace import trace_problem
from graph.context import Context
from graph.state import SampleInput, event
from nodes.prompt_files import fragment
from nodes.region_writer import RegionAttempt, write_region

# Samples after the greedy one; in the probe, T = 0.7 scored 8.75/20 a sample where greedy scored 14/20.
SAMPLE_TEMPERATURE = 0.5


@functools.lru_cache(maxsize=16)
def _partitioned(source: str) -> tuple[Region, ...]:
    problem = problem_from_dict({"name": "task", "level": 0, "problem_id": 0, "source": source})
    return tuple(partition(trace_problem(problem)))


def offered(
    source: str, ambition: str, profile: dict[str, Any] | None = None
) -> tuple[list[tuple[Region, Contract]], dict[str, float]]:
    """The regions the ambition offers in this problem with their contracts, and each region's share of
    the reference's measured time where `profile` has rows (the costliest region is then the measured
    one); RegionError says why none."""
    regions = list(_partitioned(source))
    shares = profile_shares(regions, (profile or {}).get("rows") or [])
    chosen = offer(regions, ambition, shares)
    if not chosen:
        raise RegionError(f"no region is offered at ambition {ambition}")
    return [(region, _contract(source, region.id)) for region in chosen], shares


@functools.lru_cache(maxsize=64)
def _contract(source: str, region_id: str) -> Contract:
    return render(next(r for r in _partitioned(source) if r.id == region_id))


def generate_regions(inp: SampleInput, ctx: Context, seed: int) -> dict[str, Any]:
    """One region candidate for this sample; RegionError when the task cannot be done in region mode (the
    caller writes a whole program instead)."""
    if ctx.backend != "cuda":
        raise RegionError("region kernels need CUDA; the cpu backend judges whole C++ programs")
    task, round_, sample = inp["task"], inp.get("round", 0), inp["sample"]
    profile = inp.get("profile") or {}
    parts, shares = offered(task["source"], ctx.ambition, profile)
    repairs = _repairs(inp.get("last"), [region.id for region, _ in parts])
    # Greedy once: a later round's greedy answer to the same prompt would only repeat it.
    temperature = 0.0 if (sample, round_) == (0, 0) else min(ctx.temperature, SAMPLE_TEMPERATURE)
    written: list[Written] = []
    attempts: dict[str, RegionAttempt] = {}
    for k, (region, contract) in enumerate(parts):
        repair = repairs.get(region.id)
        if repair is not None and repair[1] is None:  # right on the GPU last round: kept as it was
            written.append(Written(region, contract, repair[0]))
            continue
        attempt = write_region(
            contract,
            temperature=temperature,
            seed=seed + 100 * k,
            ambition=ctx.ambition,
            prompts=ctx.prompts,
            previous=(repair[0], repair[1]) if repair is not None and repair[1] is not None else None,
            context=_share_text(shares.get(region.id), profile.get("device")),
        )
        attempts[region.id] = attempt
        written.append(Written(region, contract, attempt.body))
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
        "local_ok": all(a.ok for a in attempts.values()),
        "prompt_tokens": sum(a.prompt_tokens for a in attempts.values()),
        "completion_tokens": sum(a.completion_tokens for a in attempts.values()),
        "seconds": round(sum(a.seconds for a in attempts.values()), 3),
    }
    last_prompt = next((a.messages[-1] for a in reversed(attempts.values()) if a.messages), None)
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
            "repaired": sorted(rid for rid, r in repairs.items() if r[1] is not None),
            "profile_shares": {rid: round(v, 4) for rid, v in shares.items()} or None,
        },
        outputs={
            "local_ok": candidate["local_ok"],
            "answers": {rid: a.rounds for rid, a in attempts.items()},
            "kept": sorted(w.region.id for w in written if w.region.id not in attempts),
            "errors": {rid: a.errors for rid, a in attempts.items() if not a.ok},
        },
    )
    return {"pending": [candidate], "events": [trace]}


def _share_text(share: float | None, device: str | None) -> str:
    """The region's measured weight, for the prompt (profiling_guided's profile; nothing without one)."""
    if share is None:
        return ""
    return fragment(
        "region/share", {"percent": f"{100 * share:.0f}", "device": device or "the profiled device"}
    )


def _repairs(last: dict[str, Any] | None, ids: list[str]) -> dict[str, tuple[str, str | None]]:
    """Region id -> (its body last round, what to fix: None when its own GPU check was right).

    Nothing when there was no region candidate last round, or when every region was right (the round
    then samples afresh: a correct candidate rewritten as it was would teach nothing)."""
    if not last or last.get("format") != "regions" or not last.get("bodies"):
        return {}
    verdict = last.get("verdict") or {}
    checks = {c.get("id"): c for c in (verdict.get("evidence") or {}).get("regions") or []}
    out: dict[str, tuple[str, str | None]] = {}
    for rid in ids:
        body = last["bodies"].get(rid)
        if body is None:
            continue
        check = checks.get(rid)
        out[rid] = (
            body,
            None if check and check.get("verdict") == "correct" else _what_the_gpu_said(verdict, check),
        )
    return {} if all(fix is None for _, fix in out.values()) else out


def _what_the_gpu_said(verdict: dict[str, Any], check: dict[str, Any] | None) -> str:
    """The GPU host's finding for one region, in the terms of its kernel: the element, or the error."""
    if check and check.get("first_mismatch_index") is not None:
        where = ", ".join(str(i) for i in check["first_mismatch_index"])
        wrong = check["first_mismatch"]
        return (
            f"On the GPU, with random inputs in [-1, 1), your kernel wrote out[{where}] = {wrong['got']:.6g} "
            f"where PyTorch gives {wrong['expected']:.6g} ({check.get('mismatches', '?')} of "
            f"{check.get('numel', '?')} elements wrong). Follow the PyTorch lines step by step."
        )
    if check and check.get("reason"):
        return (
            f"On the GPU the kernel's output was wrong: {check['reason']} (expected {check.get('expected')}, "
            f"got {check.get('got')})."
        )
    kind = verdict.get("verdict", "an error")
    log = str(verdict.get("log_tail") or "").strip().splitlines()[-6:]
    hint = " Check that every index stays inside its tensor." if kind == "runtime_error" else ""
    return f"On the GPU the candidate ended in {kind}.{hint}\n" + "\n".join(log)
