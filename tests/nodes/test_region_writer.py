"""The region writer: a body from the model, local checks, and a sampled repair that shows the error."""

from __future__ import annotations

from typing import Any

from nodes.model.llm import Completion
from nodes.region_writer import REPAIR_TEMPERATURE, write_region
from regions.contract import render
from regions.model import Region, Step
from regions.model import TensorInfo as T

F = "float32"


def _contract():
    x, out = T("x", (2, 8), F), T("sigmoid", (2, 8), F)
    step = Step(out, "torch.sigmoid", ("x",), (), "sigmoid = torch.sigmoid(x)")
    return render(Region("r0", "map", ["sigmoid"], [x], out, [step]))


class Replies:
    """A ChatBackend that answers from a list and keeps every call."""

    def __init__(self, *texts: str) -> None:
        self.texts = list(texts)
        self.calls: list[tuple[list[dict[str, str]], dict[str, Any]]] = []

    def chat(self, messages: list[dict[str, str]], **kwargs: Any) -> Completion:
        self.calls.append((messages, kwargs))
        return Completion(self.texts.pop(0), prompt_tokens=100, completion_tokens=20, seconds=0.5)


def test_a_compile_error_is_repaired_with_temperature_and_the_caret() -> None:
    model = Replies("```cuda\nfloat t1 = sigmoid(x);\n```", "```cuda\nfloat t1 = kg_sigmoid(x);\n```")
    attempt = write_region(_contract(), model=model, seed=7)
    assert attempt.ok and attempt.rounds == 2 and attempt.body == "float t1 = kg_sigmoid(x);"
    (first, first_kw), (repair, repair_kw) = model.calls
    assert first_kw["temperature"] == 0.0 and repair_kw["temperature"] == REPAIR_TEMPERATURE
    assert repair_kw["seed"] == 1007
    assert "## The PyTorch code this kernel computes" in first[-1]["content"]
    text = repair[-1]["content"]
    assert 'identifier "sigmoid" is undefined' in text and "float t1 = sigmoid(x);" in text and "^" in text
    assert attempt.history[0]["ok"] is False and attempt.completion_tokens == 40


def test_repairs_are_bounded_and_the_last_answer_is_kept() -> None:
    model = Replies(*["```cuda\n```"] * 3)
    attempt = write_region(_contract(), model=model, repairs=2)
    assert not attempt.ok and attempt.rounds == 3 and len(model.calls) == 3
    assert "no lines of code" in attempt.errors


def test_a_repair_that_repeats_the_body_judged_wrong_is_refused_and_asked_for_anew() -> None:
    """The GPU judged `1.0f - kg_sigmoid(x)` wrong; the model answers it again with a comment, so it is
    refused here (never judged again) and asked once more from the contract alone, without that body."""
    wrong = "float t1 = 1.0f - kg_sigmoid(x);"
    model = Replies(f"```cuda\n{wrong}  // fixed\n```", "```cuda\nfloat t1 = kg_sigmoid(x);\n```")
    attempt = write_region(
        _contract(), model=model, seed=3, previous=(wrong, "out[0, 1] = 0.27 where PyTorch gives 0.73")
    )
    assert attempt.ok and attempt.rounds == 2 and attempt.body == "float t1 = kg_sigmoid(x);"
    assert attempt.history[0]["ok"] is False and attempt.history[0]["lint"][-1]["code"] == "unchanged"
    (repair, _), (anew, anew_kw) = model.calls
    assert wrong in repair[-1]["content"]  # the first repair shows the body the GPU judged wrong
    asked = anew[-1]["content"]
    assert wrong not in asked and "1.0f - kg_sigmoid" not in asked  # the new framing does not show it
    assert "your last answer repeated it" in asked and "where PyTorch gives 0.73" in asked
    assert anew_kw["temperature"] == REPAIR_TEMPERATURE and anew_kw["seed"] == 1003


def test_a_local_repair_that_changes_nothing_is_named_as_such() -> None:
    broken = "float t1 = sigmoid(x);"
    model = Replies(*[f"```cuda\n{broken}\n```"] * 3)
    attempt = write_region(_contract(), model=model, repairs=2)
    assert not attempt.ok and attempt.rounds == 3
    assert [h["lint"][-1]["code"] if h["lint"] else "compile" for h in attempt.history] == [
        "compile",
        "unchanged",
        "unchanged",
    ]
    # what was said of the body stays the compiler's words, not a chain of "unchanged"
    assert 'identifier "sigmoid" is undefined' in attempt.history[-1]["lint"][-1]["said"]
    assert "unchanged" not in attempt.history[-1]["lint"][-1]["said"]
