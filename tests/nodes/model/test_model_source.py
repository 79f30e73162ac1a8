"""Model selection order and the GGUF header facts recorded with every result."""

from __future__ import annotations

from pathlib import Path

import pytest

from nodes.model.source import ModelSourceError, read_gguf_metadata, resolve_model
from nodes.model.store import ModelStoreError, embedded_model_path


@pytest.fixture(scope="module")
def embedded() -> Path:
    try:
        return embedded_model_path()
    except ModelStoreError as exc:
        pytest.skip(f"embedded model not set up: {exc}")


def test_embedded_default_is_described_from_its_header(embedded: Path, monkeypatch) -> None:
    monkeypatch.delenv("KERNELGRAPH_MODEL", raising=False)
    choice = resolve_model()
    assert choice.source == "embedded"
    assert choice.path == embedded
    assert choice.name == "Qwen2.5 Coder 1.5B Instruct GGUF"
    assert choice.quantisation == "Q4_K_M"
    assert choice.size_bytes == 1_117_320_768
    assert "Q4_K_M" in choice.headline()


def test_explicit_path_beats_env_and_env_beats_default(embedded: Path, tmp_path: Path, monkeypatch) -> None:
    link = tmp_path / "other.gguf"
    link.symlink_to(embedded)
    monkeypatch.setenv("KERNELGRAPH_MODEL", str(link))
    assert resolve_model().source == "env"
    assert resolve_model().path == link
    assert resolve_model(path=embedded).source == "explicit"
    # an explicit path also wins over a hub request: nothing is downloaded
    assert resolve_model(path=embedded, hf_repo="x/y", hf_file="z.gguf").source == "explicit"


def test_header_reader_skips_arrays_to_reach_late_keys(embedded: Path) -> None:
    meta = read_gguf_metadata(
        embedded, ("general.architecture", "qwen2.context_length", "tokenizer.ggml.model")
    )
    assert meta["general.architecture"] == "qwen2"
    assert meta["qwen2.context_length"] >= 8192
    assert meta["tokenizer.ggml.model"] == "gpt2"


def test_missing_and_non_gguf_files_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ModelSourceError, match="does not exist"):
        resolve_model(path=tmp_path / "absent.gguf")
    bogus = tmp_path / "notes.gguf"
    bogus.write_text("not a model")
    with pytest.raises(ModelSourceError, match="not a GGUF file"):
        resolve_model(path=bogus)
    truncated = tmp_path / "cut.gguf"
    truncated.write_bytes(b"GGUF\x03\x00\x00\x00")
    with pytest.raises(ModelSourceError, match="truncated GGUF header"):
        resolve_model(path=truncated)


def test_hub_request_needs_repo_and_file(monkeypatch) -> None:
    monkeypatch.delenv("KERNELGRAPH_MODEL", raising=False)
    with pytest.raises(ModelSourceError, match="needs both a repo and a file"):
        resolve_model(hf_repo="Qwen/Qwen2.5-Coder-7B-Instruct-GGUF")


def test_hub_download_failure_is_reported(monkeypatch) -> None:
    monkeypatch.delenv("KERNELGRAPH_MODEL", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelSourceError, match="could not download qwen.gguf from nobody/nothing"):
        resolve_model(hf_repo="nobody/nothing", hf_file="qwen.gguf")
