"""The region launcher's argument block without a GPU: each address the driver reads points at the slot of
that argument, in the signature's order (pointers, float scalars, the count), and the block is built once."""

from __future__ import annotations

import ctypes

from evaluator.regions.launch import _Arguments


def _read(address: int, kind: type) -> object:
    return ctypes.cast(address, ctypes.POINTER(kind)).contents.value


def test_the_addresses_point_at_the_pointers_the_scalars_and_the_count_in_order() -> None:
    block = _Arguments(3, 2, 4096)
    for slot, pointer in enumerate((0x1000, 0x2000, 0x3000)):
        block.pointers[slot] = pointer
    block.floats[0], block.floats[1] = 0.5, -2.0
    addresses = list(block.addresses)
    assert len(addresses) == 3 + 2 + 1
    assert [_read(a, ctypes.c_void_p) for a in addresses[:3]] == [0x1000, 0x2000, 0x3000]
    assert [_read(a, ctypes.c_float) for a in addresses[3:5]] == [0.5, -2.0]
    assert _read(addresses[5], ctypes.c_int64) == 4096
    assert block.handle.value == ctypes.addressof(block.addresses)


def test_a_kernel_without_scalars_passes_its_pointers_and_count_alone() -> None:
    block = _Arguments(2, 0, 7)
    assert len(list(block.addresses)) == 3 and _read(block.addresses[2], ctypes.c_int64) == 7
