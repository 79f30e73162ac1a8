"""Shape choice: the model picks its correct kernel's launch shape from the framework's menu, under a
grammar; a reply off the menu keeps the launch it has."""

from __future__ import annotations

import json
from typing import Any

import pytest

from nodes.model.llm import Completion
from nodes.shape_choice import choose_shape, parse_choice, shape_schema
from regions.model import Region, Step
from regions.model import TensorInfo as T
from regions.shapes import FIRST, VECTOR4, shapes_for

F = "float32"
BODY = "float t1 = kg_sigmoid(x);"
TIMING = "On the GPU they take 2 ms per call, where PyTorch takes 1 ms (0.50x)."


def _map(numel: int = 16) -> Region:
    x, out = T("x", (2, numel // 2), F), T("sigmoid", (2, numel // 2), F)
    step = Step(out, "torch.sigmoid", ("x",), (), "sigmoid = torch.sigmoid(x)")
    return Region("r0", "map", ["sigmoid"], [x], out, [step])


class Replies:
    def __init__(self, text: str) -> None:
        self.text = text
        self.calls: list[tuple[list[dict[str, str]], dict[str, Any]]] = []

    def chat(self, messages: list[dict[str, str]], **kwargs: Any) -> Completion:
        self.calls.append((messages, kwargs))
        return Completion(text=self.text, prompt_tokens=100, completion_tokens=10, seconds=0.5)


def test_the_model_reads_its_lines_timing_and_the_menu_and_names_a_shape() -> None:
    region = _map()
    menu = [s for s, _ in shapes_for(region)]
    model = Replies(json.dumps({"shape": VECTOR4, "why": "memory bound"}))
    choice = choose_shape(region, BODY, TIMING, menu, model=model)
    assert (choice.shape, choice.why, choice.valid) == (VECTOR4, "memory bound", True)
    ((messages, kwargs),) = model.calls
    prompt = messages[-1]["content"]
    assert "```python\nt1 = torch.sigmoid(x)\n```" in prompt  # the step in the kernel's own names
    assert BODY in prompt and TIMING in prompt
    assert f"- {FIRST}: keep the current launch" in prompt and f"- {VECTOR4}: four consecutive" in prompt
    assert kwargs["json_schema"]["properties"]["shape"]["enum"] == [FIRST, VECTOR4]
    assert kwargs["temperature"] == 0.0
    assert (choice.prompt_tokens, choice.completion_tokens) == (100, 10)


def test_no_menu_asks_nothing_and_keeps_the_first_contract() -> None:
    model = Replies("{}")
    choice = choose_shape(_map(15), BODY, TIMING, [], model=model)  # 15 elements: no vector4
    assert choice.shape == FIRST and not model.calls


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"shape": "tiled", "why": "  reuse   tiles "}', ("tiled", "reuse tiles", True)),
        ('{"shape": "warp", "why": "?"}', (FIRST, "?", False)),
        ("tiles please", (FIRST, "tiles please", False)),
    ],
)
def test_a_reply_off_the_menu_keeps_the_launch(text: str, expected: tuple[str, str, bool]) -> None:
    assert parse_choice(text, [FIRST, "tiled"]) == expected


def test_the_schema_bounds_the_name_and_the_reason() -> None:
    schema = shape_schema([FIRST, "tiled"])
    assert schema["properties"]["shape"]["enum"] == [FIRST, "tiled"]
    assert schema["properties"]["why"]["maxLength"] <= 200 and schema["required"] == ["shape", "why"]


@pytest.mark.slow
def test_the_embedded_model_answers_with_a_shape_on_the_menu() -> None:
    from nodes.model import llm
    from nodes.model.llm import shared_model
    from nodes.model.store import ModelStoreError, embedded_model_path

    try:
        embedded_model_path()
    except ModelStoreError as exc:
        pytest.skip(f"embedded model not set up: {exc}")
    llm.configure_model(n_ctx=8192)
    region = _map()
    choice = choose_shape(region, BODY, TIMING, [s for s, _ in shapes_for(region)], model=shared_model())
    assert choice.valid and choice.shape in (FIRST, VECTOR4), choice
    assert 0 < choice.completion_tokens <= 96
