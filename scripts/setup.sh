#!/usr/bin/env bash
# Sets up everything on a fresh machine: a virtual environment in .venv, the project with its dependencies,
# the embedded model assembled and verified in the user cache, and the retrieval index built with the
# packaged embeddings, and the ray extra, so `python -m evaluator run --ray` is tested on a local cluster (a
# GPU host needs none of it). Idempotent: a second run reuses the venv, the llama.cpp wheel, the assembled
# model and an unchanged index.
#
# llama.cpp is compiled once (~7 min on 2 cores) for a portable x86-64 target (AVX2, no AVX-512, no AMX)
# into a wheel folder keyed by version and flags. A native build (pip's default) runs only on the CPU it was
# built on: shared across machines through pip's wheel cache it crashed CI, and on hosts that advertise
# AMX it segfaults in the tile code.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
llama_version=0.3.36
llama_flags="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
if [ "$(uname -m)" != x86_64 ]; then llama_flags="-DGGML_NATIVE=OFF"; fi
flags_key=$(printf '%s' "$llama_flags" | sha256sum | cut -c1-12)
wheels="${KERNELGRAPH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kernelgraph}/wheels/llama-cpp-python-$llama_version-$flags_key"

[ -x .venv/bin/python ] || "$python" -m venv .venv
if ! compgen -G "$wheels/llama_cpp_python-$llama_version-*.whl" >/dev/null; then
    CMAKE_ARGS="$llama_flags" .venv/bin/python -m pip wheel --progress-bar off --no-deps --no-cache-dir \
        --no-binary llama-cpp-python -w "$wheels" "llama-cpp-python==$llama_version"
fi
wheel=$(compgen -G "$wheels/llama_cpp_python-$llama_version-*.whl")
.venv/bin/python -m pip install --progress-bar off --force-reinstall --no-deps "$wheel"
.venv/bin/python -m pip install --progress-bar off "$wheel"
.venv/bin/python -m pip install --progress-bar off -e '.[model,dev,ray]'
.venv/bin/kernelgraph-setup
.venv/bin/python -m retrieval_corpus build
