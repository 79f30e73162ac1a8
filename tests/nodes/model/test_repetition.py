"""The repetition guard (nodes.model.repetition): which token tails count as a loop, and what the guard
lets follow once one does."""

from __future__ import annotations

import numpy as np

from nodes.model.repetition import MAX_PERIOD, MIN_REPEATS, MIN_SPAN, RepetitionGuard, looping

END = 7


def test_a_fragment_repeated_over_the_span_is_a_loop() -> None:
    fragment = [11, 12, 13, 14, 15]
    assert looping([1, 2, 3] + fragment * (MIN_SPAN // len(fragment) + 1))


def test_a_single_token_repeated_is_a_loop() -> None:
    assert looping([5] * MIN_SPAN)
    assert not looping([5] * (MIN_SPAN - 1))


def test_a_long_fragment_needs_its_repeats() -> None:
    fragment = list(range(100, 100 + MAX_PERIOD))
    assert not looping(fragment * (MIN_REPEATS - 1))
    assert looping(fragment * MIN_REPEATS)


def test_code_that_varies_is_not_a_loop() -> None:
    # unrolled lines differ by their indices: no period repeats over the tail
    lines = [tok for i in range(60) for tok in (40, 41, 100 + i, 42, 43)]
    assert not looping(lines)
    assert not looping(list(range(500)))


def test_a_loop_that_stopped_is_not_one() -> None:
    assert not looping([9] * 200 + list(range(300, 400)))


def test_the_guard_leaves_the_scores_until_the_reply_loops() -> None:
    guard = RepetitionGuard(END)
    prompt = np.arange(50, dtype=np.intc)  # the prompt itself may repeat; only the reply counts
    scores = np.linspace(-1.0, 1.0, 16, dtype=np.single)
    assert np.array_equal(guard(prompt, scores), scores)
    reply = np.full(MIN_SPAN - 1, 3, dtype=np.intc)
    assert np.array_equal(guard(np.concatenate([prompt, reply]), scores), scores)
    assert not guard.fired
    ended = guard(np.concatenate([prompt, reply, [3]]), scores)
    assert guard.fired
    assert int(np.argmax(ended)) == END
    assert np.isinf(np.delete(ended, END)).all()


def test_a_repeating_prompt_does_not_fire_the_guard() -> None:
    guard = RepetitionGuard(END)
    scores = np.zeros(16, dtype=np.single)
    prompt = np.full(400, 3, dtype=np.intc)
    guard(prompt, scores)
    guard(np.concatenate([prompt, [4]]), scores)
    assert not guard.fired
