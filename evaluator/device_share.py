"""Sharing one GPU among run workers: checks side by side, profiling and timing alone.

Correctness checks are short calls with host work between them (making inputs, comparing, Python), so a
GPU that runs one worker's checks at a time sits idle most of the time; measured on the H200, the region
kind's 30 greedy jobs held the device 2.7 s each, of which profiling and timing took 1.6 s. Up to `shares`
workers may check at once (separate processes, separate CUDA contexts: a fault in one does not reach the
others); a worker about to profile or time waits until it has the device to itself, so what it measures is
its own work alone.

The shares are `shares` lock files beside `base` (flock, released by the kernel when a worker dies, however
it dies) and a gate: a worker that wants the device alone holds the gate while it takes every share in
order, and newcomers pass the gate before trying a share, so it is never starved by a stream of them.

A worker also does some GPU work before it holds a share (`quiet`: building the reference and its first
call, which loads kernels and creates library handles). That work holds a third kind of lock, shared among
such workers and taken whole, last, by a worker alone, so it never runs beside a measurement, and it goes on
while a worker gathers the shares.
"""

from __future__ import annotations

import fcntl
import os
import random
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

_POLL_S = 0.01  # a worker waiting for any share retries this often: the device idles no longer than this


class DeviceShare:
    """One worker's hold on a device: none, one share (`shared`), or every share (`alone`)."""

    def __init__(self, base: str | Path, shares: int) -> None:
        self.base = Path(base)
        self.shares = max(1, shares)
        self._held: list[IO[str]] = []
        self.alone_held = False

    def shared(self) -> None:
        """Wait for any one share (behind any worker that is gathering the device for itself)."""
        if self._held:
            return
        order = list(range(self.shares))
        while True:
            with self._open("gate") as gate:  # blocks while a worker gathers every share
                fcntl.flock(gate, fcntl.LOCK_EX)
            random.shuffle(order)
            for j in order:
                handle = self._open(str(j))
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    handle.close()
                    continue
                self._held = [handle]
                return
            time.sleep(_POLL_S)

    def alone(self) -> None:
        """Give back this worker's share, then take every share and the quiet lock: no other worker runs
        on the device, not even outside a share."""
        if self.alone_held:
            return
        self.release()
        with self._open("gate") as gate:
            fcntl.flock(gate, fcntl.LOCK_EX)
            for suffix in [*map(str, range(self.shares)), "quiet"]:
                handle = self._open(suffix)
                fcntl.flock(handle, fcntl.LOCK_EX)
                self._held.append(handle)
        self.alone_held = True

    @contextmanager
    def quiet(self) -> Iterator[None]:
        """GPU work outside a share: waits while a worker has the device alone, and a worker about to take
        it alone waits for the work to end. Keep it short and trusted: a worker alone waits for it (never a
        candidate's code, which may hang).

        It does not pass the gate: a worker gathering the device holds the gate until the last share is
        free, seconds of other workers' checks, and starting workers would idle behind it (measured on the
        H200, 60 region jobs: 23.7-25.8 verdicts/min with 8 workers when quiet() passed the gate, against
        28.0-32.4 before the quiet lock existed). The quiet lock is taken last by alone(), once the shares
        are gathered, so what waits is one worker, for reference work that lasts well under a second."""
        with self._open("quiet") as handle:
            fcntl.flock(handle, fcntl.LOCK_SH)
            yield

    def release(self) -> None:
        for handle in self._held:
            handle.close()  # closing the file releases its flock
        self._held = []
        self.alone_held = False

    def _open(self, suffix: str) -> IO[str]:
        path = self.base.with_name(f"{self.base.name}.{suffix}")
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        return os.fdopen(fd, "r+")
