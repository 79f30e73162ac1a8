"""The profiler seam: where the reference model spends its time, op by op (evaluator.profile)."""

from __future__ import annotations

from typing import Any

from tools.seam import Seam


def _profile(problem: dict[str, Any], backend: str, store: str | None = None) -> dict[str, Any]:
    """Profile the reference with the evaluator (cached per problem and device); {'text': ..., ...}.

    With `store` (a profile store from the GPU host) the profile is only read from there, never measured.
    """
    from pathlib import Path

    from evaluator.api import EvalConfig
    from evaluator.problem import problem_from_dict
    from evaluator.profile import find_profile, profile_problem

    reference = problem_from_dict(problem)
    if store is not None:
        found = find_profile(Path(store), reference)
        if found is None:
            raise FileNotFoundError(
                f"no profile of {reference.key} in {store}; make it on the GPU host: "
                f"python -m evaluator profile PROBLEM --out {store}"
            )
        return found
    import torch

    if backend == "cuda" and not torch.cuda.is_available():
        raise RuntimeError(
            "no GPU here to profile the reference on, and no profile store: the prompt goes without a "
            "profile (make one on the GPU host, python -m evaluator profile ROOT --out DIR, then --set "
            "profiles=DIR)"
        )
    return profile_problem(reference, EvalConfig(backend=backend))


PROFILER: Seam = Seam(_profile)


def profile_reference(problem: dict[str, Any], backend: str, store: str | None = None) -> dict[str, Any]:
    """Profile with the current implementation (the real profiler unless a test swapped it)."""
    return PROFILER.current(problem, backend, store)
