"""kernelgraph's non-LLM oracle: load, extract, check, build, run and time KernelBench candidates.

Imports only torch and the standard library so it runs alone on any GPU host. Entry points:
`evaluator.api.evaluate`, `evaluator.api.evaluate_many`, `evaluator.profile.profile_problem`, and the CLI
`python -m evaluator`.
"""
