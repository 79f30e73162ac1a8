"""The seams the nodes call for the evaluator, the profiler and the retriever (tools.seam.Seam).

Each module holds one capability's real implementation behind a `Seam`, so tests (and other hosts) swap it
process-wide without touching the graphs.
"""
