"""A scripted model and evaluator: graph tests exercise wiring and routing, not the LLM or a GPU."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from typing import Any

from evaluator.verdict import Verdict, make
from nodes.model.llm import Completion

TASK = {
    "name": "Tiny_Relu",
    "level": 1,
    "problem_id": 1,
    "source": (
        "import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    def forward(self, x):\n"
        "        return torch.relu(x)\n\n\ndef get_inputs():\n    return [torch.randn(8)]\n\n\n"
        "def get_init_inputs():\n    return []\n"
    ),
}

_MARK = re.compile(r"# verdict: (\w+)(?: ([\d.]+))?")


def answer(kind: str, speedup: float | None = None, body: str = "") -> str:
    """A model answer whose code carries the verdict the scripted evaluator will give it."""
    mark = f"# verdict: {kind}" + (f" {speedup}" if speedup is not None else "")
    return f"```python\n{mark}\n{body}\nclass ModelNew:\n    pass\n```"


def verdict(kind: str, speedup: float | None = None, log: str = "") -> Verdict:
    """A verdict made by the evaluator's own constructor."""
    speedup = speedup if kind == "correct" else None
    return make(kind, log_tail=log or f"{kind} happened", speedup_eager=speedup)


def judge(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The scripted evaluator: reads the verdict mark in each candidate; unmarked text has no code."""
    results = []
    for job in jobs:
        match = _MARK.search(job["candidate"])
        kind, speed = (match.group(1), match.group(2)) if match else ("no_code", None)
        results.append({"job_id": job["job_id"], **verdict(kind, float(speed) if speed else None)})
    return results


class ScriptedModel:
    """A ChatBackend whose replies come from a function of the call; records every call, thread-safe."""

    def __init__(self, reply: Callable[[list[dict[str, str]], dict[str, Any]], str]) -> None:
        self.reply = reply
        self.calls: list[tuple[list[dict[str, str]], dict[str, Any]]] = []
        self._lock = threading.Lock()

    def chat(self, messages: list[dict[str, str]], **kwargs: Any) -> Completion:
        with self._lock:
            self.calls.append((messages, kwargs))
            text = self.reply(messages, kwargs)
        return Completion(
            text=text,
            prompt_tokens=sum(len(m["content"]) for m in messages) // 4,
            completion_tokens=len(text) // 4,
            seconds=0.01,
        )

    def calls_for(self, kind: str) -> list[tuple[list[dict[str, str]], dict[str, Any]]]:
        """Calls by role: 'plan', 'shape' and 'triage' carry a JSON schema, 'generate' does not."""

        def role(kwargs: dict[str, Any]) -> str:
            schema = kwargs.get("json_schema")
            if schema is None:
                return "generate"
            if "shape" in schema["properties"]:
                return "shape"
            return "plan" if {"ops", "regions"} & set(schema["properties"]) else "triage"

        return [c for c in self.calls if role(c[1]) == kind]


PLAN = (
    '{"summary": "fuse the relu", "ops": [{"op": "torch.relu(x)", "action": "replace", '
    '"category": "activation"}]}'
)
REGION_PLAN = "one thread per element, the steps in order"
DIAGNOSIS = (
    '{"reference_math": "max(x, 0)", "kernel_math": "min(x, 0)", "wrong_line": "o = fminf(x, 0);", '
    '"fixed_line": "o = fmaxf(x, 0);"}'
)


def default_reply(generate: Callable[[list[dict[str, str]], dict[str, Any]], str]):
    """Route JSON calls to a fixed plan/diagnosis and generation calls to the given function."""

    def reply(messages: list[dict[str, str]], kwargs: dict[str, Any]) -> str:
        schema = kwargs.get("json_schema")
        if schema is not None and "regions" in schema["properties"]:  # region mode: the first offered
            first = schema["properties"]["regions"]["items"]["properties"]["id"]["enum"][0]
            return json.dumps({"summary": "one kernel", "regions": [{"id": first, "plan": REGION_PLAN}]})
        if schema is not None and "shape" in schema["properties"]:  # the fast second: the last shape listed
            return json.dumps({"shape": schema["properties"]["shape"]["enum"][-1], "why": "faster"})
        if schema is not None:
            return PLAN if "ops" in schema["properties"] else DIAGNOSIS
        return generate(messages, kwargs)

    return reply


def choosing(model: ScriptedModel, shape: str) -> ScriptedModel:
    """The same model, answering every launch-shape choice of the fast second with `shape`."""
    inner = model.reply

    def reply(messages: list[dict[str, str]], kwargs: dict[str, Any]) -> str:
        schema = kwargs.get("json_schema")
        if schema is not None and "shape" in schema["properties"]:
            return json.dumps({"shape": shape, "why": "scripted"})
        return inner(messages, kwargs)

    model.reply = reply
    return model
