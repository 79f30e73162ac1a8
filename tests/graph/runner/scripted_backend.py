"""A scripted stand-in for the shared model, for tests that run run.py or `langgraph dev` in a subprocess.

Named through `KERNELGRAPH_TEST_MODEL=scripted_backend:make`, with this folder and `scripted_site/` (whose
sitecustomize installs it at start-up) on PYTHONPATH; `child_env` builds that environment. It answers
schema-constrained calls with the smallest JSON the schema accepts and every other call with prose and no
code block, so the evaluator's verdict is a fast, real `no_code`. `SCRIPTED_DELAY` (seconds per call) lets
the kill -9 test stop a sweep in the middle; `SCRIPTED_CALLS` (a file) receives the wall time at which each
call starts, so that test can kill while a call is under way, not as a graph writes its result.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from nodes.model.llm import Completion


def example(schema: dict[str, Any]) -> Any:
    """The smallest value a (simple) JSON schema accepts: first enum value, one-item arrays, required keys."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        return {key: example(props[key]) for key in schema.get("required", list(props))}
    if kind == "array":
        return [example(schema.get("items", {"type": "string"}))]
    return {"integer": 1, "number": 1.0, "boolean": False}.get(kind, "scripted")


class ScriptedBackend:
    """Deterministic replies; records every call so tests can count them."""

    def __init__(self, delay: float = 0.0, calls_file: str | None = None) -> None:
        self.delay = delay
        self.calls_file = calls_file
        self.calls: list[list[dict[str, str]]] = []

    def chat(
        self,
        messages: list[dict[str, str]],
        *,
        max_tokens: int = 2048,
        temperature: float = 0.0,
        seed: int | None = None,
        json_schema: dict[str, Any] | None = None,
        stop: list[str] | None = None,
    ) -> Completion:
        self.calls.append(messages)
        if self.calls_file:
            with open(self.calls_file, "a") as fh:
                fh.write(f"{time.time()}\n")
        time.sleep(self.delay)
        text = (
            json.dumps(example(json_schema)) if json_schema else "I would fuse these ops, but I give no code."
        )
        prompt_tokens = sum(len(m["content"].split()) for m in messages)
        return Completion(
            text=text, prompt_tokens=prompt_tokens, completion_tokens=len(text.split()), seconds=self.delay
        )


def child_env(repo: Path, **extra: str) -> dict[str, str]:
    """The environment of a child process (run.py, `langgraph dev`) whose shared model is `make()`'s."""
    here = Path(__file__).resolve().parent
    return dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(str(p) for p in (here / "scripted_site", here, repo)),
        KERNELGRAPH_TEST_MODEL="scripted_backend:make",
        **extra,
    )


def make() -> ScriptedBackend:
    return ScriptedBackend(
        delay=float(os.environ.get("SCRIPTED_DELAY", "0")), calls_file=os.environ.get("SCRIPTED_CALLS")
    )
