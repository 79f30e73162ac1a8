"""The runtime context every strategy takes (LangGraph ``context_schema``): one knob set for all four graphs.

This module is the one source of the strategy names, every knob's default and its choices: graph.BUILDERS,
graph.studio, nodes.presets and run.py read them from here. The ambition names are the standalone
evaluator's (regions.model, where they choose which regions are offered), and `autotune`, which writes two
of them (``Context.cuts``).

Build it in Python (``Context(samples=4, ambition="conservative")``), from a preset
(``Context(preset="repaired-agent")`` or ``Context.from_preset("naive-agent", rounds=5)``), from run.py, or
fill it in Studio: every field carries a description, which Studio shows. ``Context(preset=...)`` applies the
preset once, when it is built, under the fields still at their defaults (so a field cannot be set to its
default value that way; ``from_preset`` has no such limit). Nodes read it through ``settings(runtime)``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, get_args, get_type_hints

from pydantic import Field

from nodes.presets import preset_values
from regions.model import AMBITIONS

# `autotune` writes both cuts and keeps the faster strictly correct candidate (select), as Inductor's
# max-autotune times its own kernel against the library call: the aggressive cut puts products and
# convolutions into the model's kernels, the moderate cut leaves them to cuBLAS and cuDNN, and which is
# faster depends on the shapes (measured on the shared level 2: each cut wins on some tasks).
AUTOTUNE = "autotune"
AUTOTUNE_CUTS: tuple[str, ...] = ("aggressive", "moderate")
Ambition = Literal[(*AMBITIONS, AUTOTUNE)]  # type: ignore[valid-type]

Strategy = Literal["zero_shot", "profiling_guided", "iterative_refinement", "agent"]
STRATEGIES: tuple[str, ...] = get_args(Strategy)
# What the model writes: kernel bodies in region contracts, or whole programs. Not a knob: a graph is built
# in one format (graph.formats wires each).
Format = Literal["regions", "program"]
FORMATS: tuple[str, ...] = get_args(Format)


def _doc(text: str, **constraints: Any) -> Any:
    """A field description (and bounds) that pydantic, hence Studio's context form, picks up."""
    return Field(description=text, **constraints)


@dataclass(frozen=True)
class Context:
    """Run-time settings of a strategy graph (same fields for every strategy)."""

    samples: Annotated[int, _doc(
        "n: candidates generated per round (fanned out with Send; best-of-n under the evaluator).", ge=1)] = 1
    rounds: Annotated[int, _doc(
        "k: generate-evaluate rounds for iterative_refinement and agent (zero_shot and profiling_guided "
        "run one round).", ge=1)] = 2
    ambition: Annotated[Ambition, _doc(
        "How much of the model to rewrite: conservative = fuse or replace one memory-bound op and keep "
        "library GEMM/conv; moderate = replace the main ops and fuse epilogues; aggressive = rewrite the "
        "whole model in custom kernels (in region mode: products too, each with its pointwise epilogue fused "
        "into its kernel); autotune = write both the aggressive and the moderate cut, each at n samples, and "
        "keep the faster strictly correct candidate (later rounds refine the cut that won). Picks "
        "nodes/prompts/<ambition>/ (autotune: each cut's own).")] = "moderate"
    temperature: Annotated[float, _doc(
        "Sampling temperature of generation (0 = greedy; analysis and triage stay greedy).", ge=0.0)] = 0.7
    prompts: Annotated[dict[str, str], _doc(
        "Per-node prompt overrides: node name (generate, feedback, analysis, triage) -> a path to a .md "
        "file or the prompt text itself; replaces nodes/prompts/<ambition>/<node>.md.")] = field(
        default_factory=dict)
    retrieval_k: Annotated[int, _doc(
        "How many retrieval_corpus examples the agent puts in the generation prompt (0 = none).", ge=0)] = 2
    evaluator: Annotated[Literal["local", "deferred"], _doc(
        "local: evaluate candidates here in the evaluator's isolated subprocesses; deferred: interrupt with "
        "the pending candidates as job dicts and resume with Command(resume=results).")] = "local"
    backend: Annotated[Literal["cuda", "cpu"], _doc(
        "cuda: candidates are CUDA kernels (load_inline cuda_sources), timed on a GPU; cpu: C++ kernels "
        "(load_inline cpp_sources only), evaluated on the CPU.")] = "cuda"
    max_tokens: Annotated[int, _doc(
        "Completion budget per generation call (analysis and triage use a quarter of it).", ge=16)] = 2048
    seed: Annotated[int | None, _doc(
        "Base sampling seed; sample i of round r uses seed + 1000*r + i. None: derived from the task name.",
    )] = None
    feedback: Annotated[Literal["focused", "naive"], _doc(
        "focused: triage gives one instruction, the last candidate and the real error, short; naive: the "
        "paper's first agent, the whole log tail and 'fix it' (kept to reproduce its failure).")] = "focused"
    replans: Annotated[int, _doc(
        "Agent only: how many times triage may send the graph back to analysis for a new plan.", ge=0)] = 1
    stop_on: Annotated[Literal["correct", "faster", "rounds"], _doc(
        "When a refining strategy stops early: at the first strictly correct candidate, at the first one "
        "faster than eager, or never (all rounds run).")] = "faster"
    profiles: Annotated[str | None, _doc(
        "A profile store made on the GPU that will evaluate (python -m evaluator profile ROOT --out DIR; "
        "benchmarks/profiles holds the H200's). When set, the profiling-guided prompt reads the reference's "
        "profile from it and never measures here: for deferred runs on a host without that GPU.")] = None
    eval_overrides: Annotated[dict[str, Any], _doc(
        "EvalConfig field overrides for the evaluator (timeouts, trials, tolerances).")] = field(
        default_factory=dict)
    writer: Annotated[Literal["model", "rules"], _doc(
        "Who writes region bodies: the model, or the framework by rule from each region's steps "
        "(regions.rules; no model is loaded): the baseline that shows what the model adds.")] = "model"
    launch: Annotated[Literal["ruled", "first"], _doc(
        "Region mode: ruled: a body written on its first contract runs on the launch shape the framework's "
        "rules pick for its kind (regions.shapes.RULED: dot, split or register-blocked products, a block "
        "per row for reductions, four elements a thread for maps) where it moves there unchanged and "
        "passes the local checks; first: every region on its first contract, one thread per output "
        "element or row.")] = "ruled"
    fuse: Annotated[bool, _doc(
        "Region mode: a map whose only reader is a reduction runs inside that reduction's kernel at each "
        "element it reads (regions.prologue: a norm's x * x, a loss's pointwise part), and a map over the "
        "rows of reductions runs in their kernel after them (regions.row_maps: a norm's division, "
        "(x - mean) * rstd); every body as written. Off: every written region a kernel of its own.")] = True
    emulate: Annotated[bool, _doc(
        "Region mode: a body that passes lint and NVRTC also runs on the CPU on the problem shrunk, against "
        "its PyTorch lines (regions.emulate), and wrong values are repaired here before any GPU judges "
        "them. Off: the local checks are lint and NVRTC alone (a few seconds less per answer).")] = True
    preset: Annotated[str | None, _doc(
        "A named configuration from nodes.presets (e.g. naive-agent, repaired-agent); applied once, when the "
        "context is built, under every field left at its default.")] = None

    def __post_init__(self) -> None:
        """Apply ``preset`` here, once, so Studio's context dicts and Python resolve presets alike."""
        if not self.preset:
            return
        defaults = Context()
        for name, value in preset_values(self.preset).items():
            if getattr(self, name) == getattr(defaults, name):
                object.__setattr__(self, name, value)

    def cuts(self) -> tuple[str, ...]:
        """The ambitions a round writes candidates at: both cuts under autotune, else the one."""
        return AUTOTUNE_CUTS if self.ambition == AUTOTUNE else (self.ambition,)

    @property
    def lead(self) -> str:
        """The ambition of the nodes that write one thing a round (analysis, retrieval, triage, feedback,
        whole programs): autotune's first cut, else the ambition."""
        return self.cuts()[0]

    @classmethod
    def from_preset(cls, name: str, **overrides: Any) -> Context:
        """A context with the preset's values, then the explicit overrides on top (even ones at a default).

        The preset is applied here, so ``preset`` stays None: ``__post_init__`` would undo such overrides.
        """
        return cls(**{**preset_values(name), **overrides})


def settings(runtime: Any) -> Context:
    """A node's ``Runtime`` context, its preset applied when it was built (a default Context if none)."""
    ctx = getattr(runtime, "context", None)
    if ctx is None:
        return Context()
    if isinstance(ctx, dict):
        return Context(**ctx)
    return ctx


def choices(name: str) -> tuple[Any, ...]:
    """The values a Literal-typed Context field accepts (ambition, backend, evaluator, ...), for run.py."""
    return get_args(get_type_hints(Context)[name])


def describe() -> dict[str, str]:
    """Field name -> description, for run.py's --help and documentation."""
    hints = get_type_hints(Context, include_extras=True)
    return {f.name: next((m.description for m in getattr(hints[f.name], "__metadata__", ())
                          if getattr(m, "description", None)), "")
            for f in dataclasses.fields(Context)}
