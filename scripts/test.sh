#!/usr/bin/env bash
# Runs the test suite: every CPU test, the real embedded model and real builds included. GPU tests skip
# cleanly without CUDA (run them on a GPU host with scripts/gpu_suite.sh). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
exec .venv/bin/python -m pytest "$@"
