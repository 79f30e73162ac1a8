"""Swaps the shared model for a scripted one in a child process that tests start (run.py, `langgraph dev`).

Those tests cannot call `use_model` inside the child, so they put this folder on its PYTHONPATH and name a
factory in `KERNELGRAPH_TEST_MODEL=module:factory`; Python imports this file at start-up (it shadows any
sitecustomize of the interpreter; this venv's has none) and the model stays swapped for the process's life.
Evaluator workers never see it: they get a PYTHONPATH of their own. A broken hook stops the process rather
than letting it fall back to the real model (Python only warns about an ordinary error in sitecustomize).
"""

from __future__ import annotations

import importlib
import os
from contextlib import ExitStack

ENV = "KERNELGRAPH_TEST_MODEL"
_for_life = ExitStack()  # entered once, never closed


def _install(spec: str) -> None:
    from nodes.model.llm import use_model

    module, _, attr = spec.partition(":")
    if not attr:
        raise ValueError(f"{ENV} must look like 'package.module:factory', got {spec!r}")
    _for_life.enter_context(use_model(getattr(importlib.import_module(module), attr)()))


if spec := os.environ.get(ENV):
    try:
        _install(spec)
    except Exception as exc:
        raise SystemExit(f"{ENV}={spec!r}: {exc!r}") from exc
