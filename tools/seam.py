"""A swappable implementation: the real evaluator, profiler or retriever, or a test's fake, process-wide."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

F = TypeVar("F", bound=Callable[..., object])


class Seam(Generic[F]):
    """Holds the implementation the nodes call; ``use`` swaps it for the duration (tests, other hosts)."""

    def __init__(self, default: F) -> None:
        self._default = default
        self._current: F = default
        self._lock = threading.Lock()

    @property
    def current(self) -> F:
        return self._current

    @contextmanager
    def use(self, fn: F) -> Iterator[F]:
        with self._lock:
            previous, self._current = self._current, fn
        try:
            yield fn
        finally:
            with self._lock:
                self._current = previous
