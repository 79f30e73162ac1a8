"""Sharing a device among run workers: up to `shares` check at once; a worker that measures is alone."""

from __future__ import annotations

import fcntl
import subprocess
import sys
import threading
import time
from pathlib import Path

from evaluator.device_share import DeviceShare


def test_shares_run_side_by_side_and_alone_waits_for_all_of_them(tmp_path: Path) -> None:
    base = tmp_path / "cuda0.lock"
    a, b, c = DeviceShare(base, 2), DeviceShare(base, 2), DeviceShare(base, 2)
    a.shared()
    b.shared()  # a second share is free: both check at once
    done = threading.Event()

    def measure() -> None:
        c.alone()
        done.set()

    waiter = threading.Thread(target=measure, daemon=True)
    waiter.start()
    time.sleep(0.3)
    assert not done.is_set(), "alone() returned while two other workers held shares"
    a.release()
    time.sleep(0.1)
    assert not done.is_set(), "alone() returned while another worker still held a share"
    b.release()
    waiter.join(timeout=60)
    assert done.is_set() and c.alone_held
    c.release()


def test_a_newcomer_waits_behind_a_worker_that_wants_the_device_alone(tmp_path: Path) -> None:
    """The measuring worker is not starved by workers that keep arriving for a share."""
    base = tmp_path / "cuda0.lock"
    holder, measurer, newcomer = DeviceShare(base, 2), DeviceShare(base, 2), DeviceShare(base, 2)
    holder.shared()
    order: list[str] = []
    alone = threading.Thread(target=lambda: (measurer.alone(), order.append("alone")), daemon=True)
    alone.start()
    _wait_until_locked(tmp_path / "cuda0.lock.gate")  # the measurer holds the gate, waits for a share
    late = threading.Thread(target=lambda: (newcomer.shared(), order.append("shared")), daemon=True)
    late.start()
    time.sleep(0.3)
    assert order == []  # neither got in while the holder kept its share
    holder.release()
    alone.join(timeout=60)
    assert order == ["alone"]
    measurer.release()
    late.join(timeout=60)
    assert order == ["alone", "shared"]
    newcomer.release()


def test_a_share_held_by_a_killed_worker_comes_back(tmp_path: Path) -> None:
    base = tmp_path / "cuda0.lock"
    code = (
        "import sys, time; from evaluator.device_share import DeviceShare\n"
        f"s = DeviceShare({str(base)!r}, 1); s.shared(); print('held', flush=True); time.sleep(600)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, cwd=Path(__file__).parents[2]
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        proc.kill()
        proc.wait()
        me = DeviceShare(base, 1)
        me.alone()  # would block forever if the dead worker's lock outlived it
        assert me.alone_held
        me.release()
    finally:
        proc.kill()


def _wait_until_locked(path: Path) -> None:
    """Until another holder has `path` locked (however long a busy machine takes to get there)."""
    while True:
        if path.exists():
            with open(path) as handle:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    return
        time.sleep(0.02)


def _free(path: Path, mode: int) -> bool:
    """Whether `path` could be locked in `mode` now (without waiting)."""
    with open(path, "a") as handle:
        try:
            fcntl.flock(handle, mode | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True


def test_work_outside_a_share_never_runs_beside_a_worker_alone(tmp_path: Path) -> None:
    base = tmp_path / "cuda0.lock"
    quiet = tmp_path / "cuda0.lock.quiet"
    measurer, preparer = DeviceShare(base, 3), DeviceShare(base, 3)
    measurer.alone()
    assert not _free(quiet, fcntl.LOCK_SH)  # a preparing worker's quiet() would wait
    measurer.release()
    with preparer.quiet():
        assert _free(quiet, fcntl.LOCK_SH)  # several prepare side by side
        assert not _free(quiet, fcntl.LOCK_EX)  # the measurer's alone() waits for them
        order: list[str] = []
        alone = threading.Thread(target=lambda: (measurer.alone(), order.append("alone")), daemon=True)
        alone.start()
        _wait_until_locked(tmp_path / "cuda0.lock.gate")  # the measurer is gathering the device
        order.append("prepared")
    alone.join(timeout=60)
    assert order == ["prepared", "alone"] and measurer.alone_held
    measurer.release()
    assert _free(quiet, fcntl.LOCK_EX)


def test_work_outside_a_share_goes_on_while_a_worker_gathers_the_device(tmp_path: Path) -> None:
    base = tmp_path / "cuda0.lock"
    holder, measurer, preparer = DeviceShare(base, 1), DeviceShare(base, 1), DeviceShare(base, 1)
    holder.shared()
    order: list[str] = []
    alone = threading.Thread(target=lambda: (measurer.alone(), order.append("alone")), daemon=True)
    alone.start()
    _wait_until_locked(tmp_path / "cuda0.lock.gate")  # the measurer holds the gate, waits for the share
    prepared = threading.Event()

    def prepare() -> None:
        with preparer.quiet():  # would wait behind the gate, and so for the share, if quiet() passed it
            order.append("prepared")
        prepared.set()

    threading.Thread(target=prepare, daemon=True).start()
    assert prepared.wait(timeout=60)
    holder.release()
    alone.join(timeout=60)
    assert order == ["prepared", "alone"] and measurer.alone_held
    measurer.release()
