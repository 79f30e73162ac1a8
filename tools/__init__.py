"""LangChain tools over the evaluator, the profiler and the retriever (typed arguments)."""

from tools.evaluator import evaluate_candidates, evaluate_kernel
from tools.profiler import profile_reference_tool
from tools.retriever import search_examples_tool

TOOLS = [evaluate_candidates, evaluate_kernel, profile_reference_tool, search_examples_tool]

__all__ = [
    "TOOLS",
    "evaluate_candidates",
    "evaluate_kernel",
    "profile_reference_tool",
    "search_examples_tool",
]
