"""The one shared model of a process: a llama.cpp `Llama`, loaded lazily and used under a lock.

Every node of every strategy calls this model. A `Llama` is not thread-safe (Send branches run in threads),
so calls are serialised; loading happens on first use so that `--help`, Studio's graph listing and tests
with a scripted backend never pay for it. Structured replies use llama.cpp's JSON-schema grammars rather
than tool calling. Each call reports its token counts and seconds, including how many prompt tokens were
actually evaluated: back-to-back calls with a shared prefix reuse llama.cpp's KV cache. A free-text reply
that falls into a loop is ended there (nodes.model.repetition).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from nodes.model.repetition import RepetitionGuard
from nodes.model.source import ModelChoice, resolve_model

DEFAULT_N_CTX = 16384
REPETITION = "repetition"  # a Completion's finish_reason where the repetition guard ended the reply


def cpu_threads() -> int:
    """Every core this process may use. llama-cpp-python's own default is half the cores (it assumes
    SMT siblings): on a 2-core host that decodes on one core, 1.4x slower than on both (measured)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@dataclass(frozen=True)
class Completion:
    """One model reply and what it cost."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    prompt_eval_tokens: int = 0  # prompt tokens evaluated by this call; the rest came from the KV cache
    prompt_seconds: float = 0.0
    finish_reason: str = ""  # llama.cpp's ("stop", "length"), or REPETITION

    def usage(self) -> dict[str, Any]:
        """Everything but the text: what a trace or a result records about the call."""
        return {key: value for key, value in asdict(self).items() if key != "text"}


class ChatBackend(Protocol):
    """What nodes need from a model; the llama.cpp model and the tests' scripted model both provide it."""

    def chat(
        self,
        messages: list[dict[str, str]],
        *,
        max_tokens: int = 2048,
        temperature: float = 0.0,
        seed: int | None = None,
        json_schema: dict[str, Any] | None = None,
        stop: list[str] | None = None,
    ) -> Completion: ...


@dataclass
class UsageTotals:
    """Running totals over every call of a backend in this process."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, completion: Completion) -> None:
        with self.lock:
            self.calls += 1
            self.prompt_tokens += completion.prompt_tokens
            self.completion_tokens += completion.completion_tokens
            self.seconds += completion.seconds


class LlamaCppModel:
    """A GGUF model through llama-cpp-python, safe to share between threads."""

    def __init__(self, choice: ModelChoice, n_ctx: int = DEFAULT_N_CTX, n_threads: int | None = None) -> None:
        import llama_cpp

        self.choice = choice
        self.gpu_offload = bool(llama_cpp.llama_supports_gpu_offload())
        self._lock = threading.Lock()
        self._llama = llama_cpp.Llama(
            model_path=str(choice.path),
            n_ctx=n_ctx,
            n_gpu_layers=-1 if self.gpu_offload else 0,
            n_threads=n_threads or cpu_threads(),
            verbose=False,
        )
        self.n_ctx = self._llama.n_ctx()
        self.totals = UsageTotals()

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
        response_format = {"type": "json_object", "schema": json_schema} if json_schema is not None else None
        # a grammar decides where a JSON reply may end: the guard watches free text only
        guard = RepetitionGuard(self._llama.token_eos()) if json_schema is None else None
        with self._lock:
            perf = _PerfCounter(self._llama)
            started = time.perf_counter()
            reply = self._llama.create_chat_completion(
                messages=messages,
                max_tokens=max_tokens,
                temperature=temperature,
                seed=seed,
                stop=stop or [],
                response_format=response_format,
                logits_processor=_processors(guard),
            )
            seconds = time.perf_counter() - started
            prompt_eval_tokens, prompt_seconds = perf.prompt()
        choice = reply["choices"][0]
        usage = reply.get("usage") or {}
        completion = Completion(
            text=choice["message"].get("content") or "",
            prompt_tokens=int(usage.get("prompt_tokens", 0)),
            completion_tokens=int(usage.get("completion_tokens", 0)),
            seconds=seconds,
            prompt_eval_tokens=prompt_eval_tokens,
            prompt_seconds=prompt_seconds,
            finish_reason=REPETITION if guard and guard.fired else choice.get("finish_reason") or "",
        )
        self.totals.add(completion)
        return completion

    def info(self) -> dict[str, Any]:
        return self.choice.describe() | {"n_ctx": self.n_ctx, "gpu_offload": self.gpu_offload}


def _processors(guard: RepetitionGuard | None) -> Any:
    """The logits processors of one call: the repetition guard where it watches."""
    if guard is None:
        return None
    import llama_cpp

    return llama_cpp.LogitsProcessorList([guard])


class _PerfCounter:
    """llama.cpp's own prompt-evaluation counters, read as a difference around one call."""

    def __init__(self, llama: Any) -> None:
        import llama_cpp

        self._ctx = llama._ctx.ctx
        self._read = llama_cpp.llama_perf_context
        self._before = self._read(self._ctx)

    def prompt(self) -> tuple[int, float]:
        after = self._read(self._ctx)
        tokens = after.n_p_eval - self._before.n_p_eval
        return int(tokens), (after.t_p_eval_ms - self._before.t_p_eval_ms) / 1000.0


_lock = threading.Lock()
_backend: ChatBackend | None = None
_choice_args: dict[str, Any] = {}


def configure_model(
    path: str | os.PathLike[str] | None = None,
    hf_repo: str | None = None,
    hf_file: str | None = None,
    n_ctx: int | None = None,
) -> None:
    """Pick the model before first use (explicit path, else hub download, else embedded default)."""
    global _backend
    with _lock:
        if isinstance(_backend, LlamaCppModel):
            _backend = None
        _choice_args.clear()
        _choice_args.update(path=path, hf_repo=hf_repo, hf_file=hf_file)
        if n_ctx is not None:
            _choice_args["n_ctx"] = n_ctx


def shared_model() -> ChatBackend:
    """The process-wide model, loaded on first use."""
    global _backend
    with _lock:
        if _backend is None:
            args = dict(_choice_args)
            n_ctx = int(args.pop("n_ctx", None) or os.environ.get("KERNELGRAPH_N_CTX", DEFAULT_N_CTX))
            _backend = LlamaCppModel(resolve_model(**args), n_ctx=n_ctx)
        return _backend


def model_info() -> dict[str, Any]:
    """What to record with every result: the loaded model, or the one that would be loaded."""
    with _lock:
        backend = _backend
        args = {k: v for k, v in _choice_args.items() if k != "n_ctx"}
    if isinstance(backend, LlamaCppModel):
        return backend.info()
    if backend is not None:
        return {"name": type(backend).__name__, "path": None, "quantisation": None, "scripted": True}
    return resolve_model(**args).describe() | {"loaded": False}


@contextmanager
def use_model(backend: ChatBackend) -> Iterator[ChatBackend]:
    """Swap the process-wide backend for the duration (a scripted model in tests)."""
    global _backend
    with _lock:
        previous, _backend = _backend, backend
    try:
        yield backend
    finally:
        with _lock:
            _backend = previous
