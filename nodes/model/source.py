"""Which GGUF file the shared model loads, and what it is.

Order: an explicit path (`--model` / `KERNELGRAPH_MODEL`), else a hub repo and file that the user asked for
(the paper's Qwen2.5-Coder-7B-Instruct GGUF, say), else the embedded default. The name and quantisation are
read from the GGUF header itself, so a result records what really ran, not what a flag claimed.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from nodes.model.store import embedded_model_path

# llama.cpp's `general.file_type` codes (enum llama_ftype) for the quantisations people actually ship.
FILE_TYPES = {
    0: "F32",
    1: "F16",
    2: "Q4_0",
    3: "Q4_1",
    7: "Q8_0",
    8: "Q5_0",
    9: "Q5_1",
    10: "Q2_K",
    11: "Q3_K_S",
    12: "Q3_K_M",
    13: "Q3_K_L",
    14: "Q4_K_S",
    15: "Q4_K_M",
    16: "Q5_K_S",
    17: "Q5_K_M",
    18: "Q6_K",
    19: "IQ2_XXS",
    20: "IQ2_XS",
    24: "IQ1_S",
    25: "IQ4_NL",
    30: "IQ4_XS",
    32: "BF16",
}


class ModelSourceError(RuntimeError):
    """The requested model cannot be found, downloaded or read."""


@dataclass(frozen=True)
class ModelChoice:
    """A resolved model file and how it was chosen."""

    path: Path
    source: str  # "explicit" | "env" | "hub" | "embedded"
    name: str
    quantisation: str
    size_bytes: int

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": str(self.path),
            "source": self.source,
            "quantisation": self.quantisation,
            "size_bytes": self.size_bytes,
        }

    def headline(self) -> str:
        return f"{self.name} {self.quantisation} ({self.size_bytes / 1e9:.2f} GB, {self.source}: {self.path})"


def resolve_model(
    path: str | os.PathLike[str] | None = None,
    hf_repo: str | None = None,
    hf_file: str | None = None,
) -> ModelChoice:
    """Resolve the model file in the documented order, without loading it."""
    if path is not None:
        return describe_file(Path(path), "explicit")
    env = os.environ.get("KERNELGRAPH_MODEL")
    if env:
        return describe_file(Path(env), "env")
    if hf_repo or hf_file:
        return describe_file(download_from_hub(hf_repo, hf_file), "hub")
    return describe_file(embedded_model_path(), "embedded")


def download_from_hub(repo: str | None, filename: str | None) -> Path:
    """Fetch one GGUF file with huggingface_hub (cached by it); only when the user asked for it."""
    if not repo or not filename:
        raise ModelSourceError("a hub model needs both a repo and a file (--hf-repo and --hf-file)")
    from huggingface_hub import hf_hub_download

    try:
        return Path(hf_hub_download(repo_id=repo, filename=filename))
    except Exception as exc:  # network, auth and missing-file errors all mean the same to the user
        raise ModelSourceError(f"could not download {filename} from {repo}: {exc}") from exc


def describe_file(path: Path, source: str) -> ModelChoice:
    """Check that `path` is a GGUF file and read its name and quantisation from the header."""
    if not path.is_file():
        raise ModelSourceError(f"model file {path} does not exist")
    meta = read_gguf_metadata(path, ("general.name", "general.file_type"))
    file_type = meta.get("general.file_type")
    name = str(meta.get("general.name") or path.stem)
    quantisation = FILE_TYPES.get(file_type, f"file_type {file_type}") if file_type is not None else "unknown"
    return ModelChoice(path, source, name, quantisation, path.stat().st_size)


_SCALARS = {
    0: "<B",
    1: "<b",
    2: "<H",
    3: "<h",
    4: "<I",
    5: "<i",
    6: "<f",
    7: "<?",
    10: "<Q",
    11: "<q",
    12: "<d",
}
_STRING, _ARRAY = 8, 9


def read_gguf_metadata(path: Path, keys: tuple[str, ...]) -> dict[str, Any]:
    """Scalar and string values of `keys` from a GGUF header, stopping as soon as all are found."""
    wanted = set(keys)
    found: dict[str, Any] = {}
    with open(path, "rb") as handle:
        if handle.read(4) != b"GGUF":
            raise ModelSourceError(f"{path} is not a GGUF file (bad magic)")
        version, _tensors, count = struct.unpack("<IQQ", _exact(handle, 20))
        if version < 2:
            raise ModelSourceError(f"{path}: GGUF version {version} is not supported")
        for _ in range(count):
            key = _read_string(handle)
            (value_type,) = struct.unpack("<I", _exact(handle, 4))
            value = _read_value(handle, value_type, keep=key in wanted)
            if key in wanted:
                found[key] = value
                if wanted <= found.keys():
                    break
    return found


def _exact(handle: BinaryIO, size: int) -> bytes:
    data = handle.read(size)
    if len(data) != size:
        raise ModelSourceError(f"{handle.name}: truncated GGUF header")
    return data


def _read_string(handle: BinaryIO) -> str:
    (length,) = struct.unpack("<Q", _exact(handle, 8))
    return _exact(handle, length).decode("utf-8", errors="replace")


def _read_value(handle: BinaryIO, value_type: int, keep: bool) -> Any:
    if value_type in _SCALARS:
        fmt = _SCALARS[value_type]
        return struct.unpack(fmt, _exact(handle, struct.calcsize(fmt)))[0]
    if value_type == _STRING:
        return _read_string(handle)
    if value_type == _ARRAY:
        item_type, length = struct.unpack("<IQ", _exact(handle, 12))
        if item_type in _SCALARS and not keep:
            handle.seek(struct.calcsize(_SCALARS[item_type]) * length, os.SEEK_CUR)
            return None
        items = [_read_value(handle, item_type, keep) for _ in range(length)]
        return items if keep else None
    raise ModelSourceError(f"{handle.name}: unknown GGUF value type {value_type}")
