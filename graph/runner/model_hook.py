"""A test-only seam: `KERNELGRAPH_TEST_MODEL=module:factory` swaps the shared model in a child process.

Tests that drive run.py or `langgraph dev` in a subprocess (kill -9, Studio) cannot call `use_model` in
that process, so this names a factory there instead. Unset (the normal case) it does nothing; set, the
run's results record the scripted backend's name in place of a GGUF model.
"""

from __future__ import annotations

import importlib
import os
from contextlib import AbstractContextManager, ExitStack, nullcontext
from typing import Any

ENV = "KERNELGRAPH_TEST_MODEL"
_permanent = ExitStack()


def _backend_from_env() -> Any | None:
    spec = os.environ.get(ENV)
    if not spec:
        return None
    module, _, attr = spec.partition(":")
    if not attr:
        raise ValueError(f"{ENV} must look like 'package.module:factory', got {spec!r}")
    return getattr(importlib.import_module(module), attr)()


def scripted_model_scope() -> AbstractContextManager[Any]:
    """`use_model(<scripted backend>)` when the variable is set, else a no-op."""
    from nodes.model.llm import use_model

    backend = _backend_from_env()
    return use_model(backend) if backend is not None else nullcontext()


def install_for_process() -> None:
    """For long-lived servers (Studio): enter the scope once and keep it for the process's life."""
    _permanent.enter_context(scripted_model_scope())
