"""The shared model with the real embedded GGUF on the CPU: text, JSON, threads, KV-cache reuse, swapping."""

from __future__ import annotations

import json
import threading

import pytest

from nodes.model import llm
from nodes.model.llm import REPETITION, Completion, LlamaCppModel, model_info, shared_model, use_model
from nodes.model.store import ModelStoreError, embedded_model_path

pytestmark = pytest.mark.slow

PLAN_SCHEMA = {
    "type": "object",
    "properties": {
        "op": {"type": "string", "enum": ["relu", "softmax", "matmul"]},
        "fuse": {"type": "boolean"},
        "steps": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3},
    },
    "required": ["op", "fuse", "steps"],
}


@pytest.fixture(scope="module")
def model() -> LlamaCppModel:
    try:
        embedded_model_path()
    except ModelStoreError as exc:
        pytest.skip(f"embedded model not set up: {exc}")
    llm.configure_model(n_ctx=8192)
    backend = shared_model()
    assert isinstance(backend, LlamaCppModel)
    return backend


def _ask(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def test_chat_returns_text_and_records_its_cost(model: LlamaCppModel) -> None:
    calls_before = model.totals.calls
    reply = model.chat(_ask("Write the CUDA keyword that marks a kernel function. One word."), max_tokens=8)
    assert "__global__" in reply.text or "global" in reply.text.lower()
    assert reply.prompt_tokens > 10
    assert 0 < reply.completion_tokens <= 8
    assert reply.seconds > 0
    assert model.totals.calls == calls_before + 1
    assert shared_model() is model  # one model per process


def test_a_reply_that_loops_is_ended_early(model: LlamaCppModel) -> None:
    line = "kg_mul_floats(\n"  # the fragment the 1.5B repeated on GoogleNet's convolution bodies
    reply = model.chat(_ask(f"Copy this text exactly, nothing else:\n\n{line * 120}"), max_tokens=700)
    assert reply.finish_reason == REPETITION
    assert reply.text.startswith(line * 4)
    assert reply.completion_tokens < 300  # cut long before max_tokens


def test_json_schema_constrains_the_reply(model: LlamaCppModel) -> None:
    reply = model.chat(
        _ask("Plan a CUDA kernel for a ReLU after a matmul. Reply in JSON."),
        max_tokens=120,
        json_schema=PLAN_SCHEMA,
    )
    data = json.loads(reply.text)
    assert data["op"] in {"relu", "softmax", "matmul"}
    assert isinstance(data["fuse"], bool)
    assert 1 <= len(data["steps"]) <= 3 and all(isinstance(s, str) for s in data["steps"])


def test_two_threads_share_the_model_safely(model: LlamaCppModel) -> None:
    replies: dict[int, Completion] = {}
    errors: list[BaseException] = []

    def ask(i: int) -> None:
        try:
            replies[i] = shared_model().chat(
                _ask(f"What is {i} + {i}? Answer with the number only."), max_tokens=6
            )
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=ask, args=(i,)) for i in (2, 3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert "4" in replies[2].text and "6" in replies[3].text


def test_repeated_prompt_reuses_the_kv_cache(model: LlamaCppModel) -> None:
    prompt = _ask("List three CUDA memory spaces, comma separated. " + "Be precise. " * 40)
    model.chat(_ask("Say hi."), max_tokens=2)  # evict whatever prefix was cached
    first = model.chat(prompt, max_tokens=8, temperature=0.8, seed=1)
    second = model.chat(prompt, max_tokens=8, temperature=0.8, seed=2)
    # the evicting prompt shares only the chat template's default system prefix with this one
    assert first.prompt_eval_tokens >= 0.8 * first.prompt_tokens
    assert second.prompt_eval_tokens < 0.1 * first.prompt_eval_tokens
    assert second.prompt_seconds < 0.1 * first.prompt_seconds


def test_model_info_describes_the_loaded_model(model: LlamaCppModel) -> None:
    info = model_info()
    assert info["quantisation"] == "Q4_K_M"
    assert info["n_ctx"] == 8192
    assert isinstance(info["gpu_offload"], bool)
    assert info["source"] in {"embedded", "env", "explicit"}


class _Scripted:
    def chat(self, messages, **kwargs) -> Completion:
        return Completion(text="scripted", prompt_tokens=1, completion_tokens=1, seconds=0.0)


def test_use_model_swaps_and_restores(model: LlamaCppModel) -> None:
    with use_model(_Scripted()) as fake:
        assert shared_model() is fake
        assert shared_model().chat(_ask("x")).text == "scripted"
        assert model_info()["scripted"] is True
    assert shared_model() is model


def test_decoding_uses_every_core(model: LlamaCppModel) -> None:
    """llama-cpp-python alone decodes on half the cores; the model asks for all of them."""
    assert llm.cpu_threads() >= 1
    assert model._llama.n_threads == llm.cpu_threads()
