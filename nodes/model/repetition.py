"""Ending a reply that has fallen into a loop.

At temperature 0 the embedded 1.5B sometimes repeats one fragment until `max_tokens` (measured on
GoogleNetInceptionV1's convolution bodies: `kg_mul_floats(` on every line for 768 tokens, 51-88 s a
reply on 2 cores, against 10-18 s for a finished one). The local checks throw such a reply away whatever
its length, so the guard ends it once its tail is one short period repeated: the repair starts minutes
sooner and nothing a check could accept is lost.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

MAX_PERIOD = 64  # tokens in the longest repeated fragment looked for (a line of code)
MIN_REPEATS = 8  # times the fragment must follow itself
MIN_SPAN = 96  # tokens the repeated tail must cover at least (short periods)


def looping(tokens: Sequence[int] | np.ndarray) -> bool:
    """Whether the sequence ends in one fragment of at most MAX_PERIOD tokens repeated MIN_REPEATS times
    over at least MIN_SPAN tokens."""
    ids = np.asarray(tokens)
    n = len(ids)
    for period in range(1, MAX_PERIOD + 1):
        span = max(MIN_SPAN, MIN_REPEATS * period)
        if span > n:
            break
        if np.array_equal(ids[n - span : n - period], ids[n - span + period :]):
            return True
    return False


class RepetitionGuard:
    """A llama.cpp logits processor for one reply: once the reply's own tokens loop, only the end of turn
    may follow. `fired` tells the caller the reply was cut."""

    def __init__(self, end_of_turn: int) -> None:
        self.end_of_turn = end_of_turn
        self.fired = False
        self._start: int | None = None  # where the reply starts in the context's tokens

    def __call__(self, input_ids: np.ndarray, scores: np.ndarray) -> np.ndarray:
        if self._start is None:
            self._start = len(input_ids)
        if not self.fired and not looping(input_ids[self._start :]):
            return scores
        self.fired = True
        ended = np.full_like(scores, -np.inf)
        ended[self.end_of_turn] = 0.0
        return ended
