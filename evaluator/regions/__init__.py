"""The region kind, as the oracle judges it: a framework-written program around model-written kernel bodies.

`launch` compiles each region kernel with NVRTC and launches it on torch's current stream (exported region
programs import it: the one part of the evaluator a candidate may import); `judge` checks one kernel alone
against its region's PyTorch lines; `nvrtc` is the compiler binding both use. Authoring (tracing, cutting,
contracts, local checks, export) lives in the top-level `regions` package, which imports this one and
never the other way round.
"""
