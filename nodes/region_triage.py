"""Region triage: the next round's route for each region of a region candidate, read off the GPU verdict.

No model call: the verdict already says what a diagnosis would guess, per region, in the kernel's terms.
- keep: the region's own check was right; its lines stay (unless the whole candidate is right: fast second);
- compile: the GPU host's NVRTC refused it; the writer repairs it locally (lint + NVRTC here, no GPU);
- values: wrong numbers; the first wrong element (multi-index, expected, got) and the region's ops;
- fault: a crash or a hang (an illegal address, most often); the bound every index must stay inside;
- optimise: the whole candidate is strictly correct and rounds remain ("fast second"): the costliest
  region, with its measured time, is made faster: the model chooses a launch shape for it
  (nodes.shape_choice) or keeps its launch and rewrites its lines. The select node keeps the result only
  if it is strictly correct and faster.
"""

from __future__ import annotations

from typing import Any, Literal

from nodes.prompt_files import fragment

Route = Literal["keep", "compile", "values", "fault", "optimise"]
FAULTS = ("runtime_error", "timeout")


def region_routes(last: dict[str, Any]) -> dict[str, dict[str, str]]:
    """Region id -> {route, text}: what the region writer does with each region of `last` next round. A
    fast second rewrites the candidate's costliest region (by measured share, else estimated cost)."""
    verdict = last.get("verdict") or {}
    bodies: dict[str, str] = last.get("bodies") or {}
    checks = {c.get("id"): c for c in (verdict.get("evidence") or {}).get("regions") or []}
    kind = str(verdict.get("verdict"))
    if kind == "correct":
        target = last.get("costliest") if last.get("costliest") in bodies else next(iter(bodies), None)
        fast = {"route": "optimise", "text": timing_text(verdict)}
        return {rid: fast if rid == target else {"route": "keep", "text": ""} for rid in bodies}
    routes: dict[str, dict[str, str]] = {}
    for rid in bodies:
        check = checks.get(rid)
        if check and check.get("verdict") == "correct":
            routes[rid] = {"route": "keep", "text": ""}
        elif check and check.get("first_mismatch_index") is not None:
            routes[rid] = {"route": "values", "text": _values(check, last, rid)}
        elif check and check.get("reason"):
            wrong = f"{check['reason']} (expected {check.get('expected')}, got {check.get('got')})"
            routes[rid] = {"route": "values", "text": f"On the GPU the kernel's output was wrong: {wrong}."}
        elif kind == "compile_error":
            routes[rid] = {"route": "compile", "text": _log(verdict)}
        elif kind in FAULTS:  # a region check is never a fault (verdict.RegionCheck)
            routes[rid] = {"route": "fault", "text": fragment("triage/region_fault", {"log": _log(verdict)})}
        else:  # the program failed elsewhere (its own check never ran): repair from what the verdict says
            routes[rid] = {"route": "values", "text": f"the candidate ended in {kind}.\n{_log(verdict)}"}
    return routes


def _values(check: dict[str, Any], last: dict[str, Any], rid: str) -> str:
    where = ", ".join(str(i) for i in check["first_mismatch_index"])
    wrong = check["first_mismatch"]
    ops = ", ".join((last.get("region_ops") or {}).get(rid) or []) or "the region's ops"
    return fragment(
        "triage/region_values",
        {
            "where": where,
            "got": f"{wrong['got']:.6g}",
            "expected": f"{wrong['expected']:.6g}",
            "mismatches": str(check.get("mismatches", "?")),
            "numel": str(check.get("numel", "?")),
            "ops": ops,
        },
    )


def timing_text(verdict: dict[str, Any]) -> str:
    """The measured time the fast second shows the model (its rewrite prompt and its shape choice)."""
    timing = (verdict.get("evidence") or {}).get("timing") or {}
    ms = (timing.get("candidate") or {}).get("ms")
    eager = (timing.get("reference_eager") or {}).get("ms")
    speedup = verdict.get("speedup_eager")
    return fragment(
        "triage/region_optimise",
        {
            "ms": f"{ms:.4g}" if isinstance(ms, int | float) else "?",
            "eager_ms": f"{eager:.4g}" if isinstance(eager, int | float) else "?",
            "speedup": f"{speedup:.2f}" if isinstance(speedup, int | float) else "?",
        },
    )


def _log(verdict: dict[str, Any]) -> str:
    return "\n".join(str(verdict.get("log_tail") or "").strip().splitlines()[-6:])
