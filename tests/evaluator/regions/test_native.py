"""The C launcher built for real with this machine's compiler, its driver entry points stood in for by
ctypes callbacks: what a launch hands cuLaunchKernel (grid, block, stream, each argument in its C type),
the context made current only when it is not, the driver's error returned, bad calls refused."""

from __future__ import annotations

import ctypes
from typing import Any

import pytest

from evaluator.regions import native

_LAUNCH = ctypes.CFUNCTYPE(
    ctypes.c_int,
    ctypes.c_void_p,
    *([ctypes.c_uint] * 7),
    ctypes.c_void_p,
    ctypes.POINTER(ctypes.c_void_p),
    ctypes.c_void_p,
)
_GET = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_void_p))
_SET = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)


class FakeDriver:
    """cuLaunchKernel, cuCtxGetCurrent and cuCtxSetCurrent as C function pointers that record calls."""

    def __init__(self, n_pointers: int, n_floats: int) -> None:
        self.launches: list[dict[str, Any]] = []
        self.contexts_set: list[int | None] = []
        self.current: int | None = None
        self.result = 0

        def launch(function, gx, gy, gz, bx, by, bz, shared, stream, params, extra):  # noqa: ANN001, ANN202
            values: list[Any] = [ctypes.c_void_p.from_address(params[i]).value for i in range(n_pointers)]
            values += [ctypes.c_float.from_address(params[n_pointers + i]).value for i in range(n_floats)]
            values.append(ctypes.c_int64.from_address(params[n_pointers + n_floats]).value)
            self.launches.append(
                {"function": function, "grid": (gx, gy, gz), "block": (bx, by, bz), "shared": shared,
                 "stream": stream, "values": values, "extra": extra}
            )  # fmt: skip
            return self.result

        def get(out):  # noqa: ANN001, ANN202
            out[0] = self.current
            return 0

        def set_(context):  # noqa: ANN001, ANN202
            self.current = context
            self.contexts_set.append(context)
            return 0

        self._keep = (_LAUNCH(launch), _GET(get), _SET(set_))  # alive as long as the module may call them

    def addresses(self) -> list[int]:
        return [ctypes.cast(f, ctypes.c_void_p).value for f in self._keep]


@pytest.fixture
def built(tmp_path, monkeypatch):  # noqa: ANN001, ANN201
    monkeypatch.setenv(native.ENV_DIR, str(tmp_path))
    native.load.cache_clear()
    yield native.load()
    native.load.cache_clear()


def test_a_launch_hands_the_driver_the_plan_and_each_argument_in_its_c_type(built) -> None:  # noqa: ANN001
    driver = FakeDriver(n_pointers=3, n_floats=2)
    built.bind(*driver.addresses())
    plan = built.plan(0xF00, (40, 2, 1), (256, 1, 1), 3, 2)
    for count in (7, 1 << 40):
        code = built.launch(plan, 0xC0, 0x5E, 0x1000, 0x2000, 0x3000, -2.5, 3, count)
        assert code == 0
    first, second = driver.launches
    assert first == {
        "function": 0xF00, "grid": (40, 2, 1), "block": (256, 1, 1), "shared": 0, "stream": 0x5E,
        "values": [0x1000, 0x2000, 0x3000, -2.5, 3.0, 7], "extra": None,
    }  # fmt: skip
    assert second["values"][-1] == 1 << 40  # the count is a 64-bit integer
    assert driver.contexts_set == [0xC0]  # made current once, then found current


def test_the_drivers_error_comes_back_and_bad_calls_are_refused(built) -> None:  # noqa: ANN001
    driver = FakeDriver(n_pointers=1, n_floats=0)
    built.bind(*driver.addresses())
    plan = built.plan(0xF00, (1, 1, 1), (32, 1, 1), 1, 0)
    driver.result = 700  # CUDA_ERROR_ILLEGAL_ADDRESS
    assert built.launch(plan, 0xC0, 0, 0x1000, 5) == 700
    with pytest.raises(TypeError, match="1 pointers, 0 floats and a count"):
        built.launch(plan, 0xC0, 0, 0x1000)
    with pytest.raises(TypeError):
        built.launch(plan, 0xC0, 0, "not an address", 5)
    with pytest.raises(ValueError, match="at most 64 arguments"):
        built.plan(0xF00, (1, 1, 1), (32, 1, 1), 40, 40)
    with pytest.raises(ValueError):  # not a plan
        built.launch(object(), 0xC0, 0, 0x1000, 5)


def test_a_second_load_reuses_the_build_and_a_missing_compiler_says_so(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv(native.ENV_DIR, str(tmp_path))
    native.load.cache_clear()
    try:
        native.load()
        (built,) = tmp_path.iterdir()
        stamp = built.stat().st_mtime_ns
        native.load.cache_clear()
        native.load()
        assert [p.stat().st_mtime_ns for p in tmp_path.iterdir()] == [stamp]
        built.unlink()
        monkeypatch.setenv("CC", str(tmp_path / "no-such-compiler"))
        native.load.cache_clear()
        with pytest.raises(native.NativeUnavailable, match="no-such-compiler"):
            native.load()
        assert list(tmp_path.iterdir()) == []  # nothing half-built left behind
    finally:
        native.load.cache_clear()
