"""The LangChain face forwards to the shared backend and reports usage; it loads no model of its own."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage

from nodes.model.chat import SharedChatModel
from nodes.model.llm import Completion, use_model


class _Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[list[dict[str, str]], dict[str, Any]]] = []

    def chat(self, messages: list[dict[str, str]], **kwargs: Any) -> Completion:
        self.calls.append((messages, kwargs))
        return Completion(text='{"ok": true}', prompt_tokens=11, completion_tokens=4, seconds=0.5)


def test_invoke_forwards_roles_options_and_usage() -> None:
    recorder = _Recorder()
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    chat = SharedChatModel(max_tokens=64, temperature=0.3, json_schema=schema)
    with use_model(recorder):
        reply = chat.invoke([SystemMessage("be brief"), HumanMessage("fuse it")], stop=["```"])
    messages, options = recorder.calls[0]
    assert messages == [{"role": "system", "content": "be brief"}, {"role": "user", "content": "fuse it"}]
    assert options["max_tokens"] == 64 and options["temperature"] == 0.3
    assert options["json_schema"] == schema and options["stop"] == ["```"]
    assert reply.content == '{"ok": true}'
    assert reply.usage_metadata == {"input_tokens": 11, "output_tokens": 4, "total_tokens": 15}
    assert reply.response_metadata["seconds"] == 0.5
