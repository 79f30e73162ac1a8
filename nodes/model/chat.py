"""A LangChain chat-model face over the shared model, for code that speaks LangChain.

It holds no model of its own: every call goes to `nodes.model.llm.shared_model()` (or whatever backend
`use_model` installed), so LangChain users and the graph's nodes share one `Llama` and one lock.
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from nodes.model.llm import shared_model

_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


class SharedChatModel(BaseChatModel):
    """`BaseChatModel` over the process's shared llama.cpp model."""

    max_tokens: int = 2048
    temperature: float = 0.0
    seed: int | None = None
    json_schema: dict[str, Any] | None = None

    @property
    def _llm_type(self) -> str:
        return "kernelgraph-shared-llama-cpp"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        payload = [{"role": _ROLES.get(m.type, m.type), "content": m.text} for m in messages]
        completion = shared_model().chat(
            payload,
            max_tokens=kwargs.get("max_tokens", self.max_tokens),
            temperature=kwargs.get("temperature", self.temperature),
            seed=kwargs.get("seed", self.seed),
            json_schema=kwargs.get("json_schema", self.json_schema),
            stop=stop,
        )
        message = AIMessage(
            content=completion.text,
            usage_metadata={
                "input_tokens": completion.prompt_tokens,
                "output_tokens": completion.completion_tokens,
                "total_tokens": completion.prompt_tokens + completion.completion_tokens,
            },
            response_metadata=completion.usage(),
        )
        return ChatResult(generations=[ChatGeneration(message=message)])
