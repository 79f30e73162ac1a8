"""Shared fixtures: where the KernelBench data and the model samples live, and GPU skipping."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"


def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip `gpu` tests cleanly, with the reason, on hosts without CUDA (CI never has one)."""
    if _cuda_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device; run scripts/gpu_suite.sh through `device`")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def kernelbench_dir() -> Path:
    """KernelBench levels 1-3, problems 1-10, read from ../shared (never copied into the project)."""
    path = SHARED / "kernelbench"
    if not path.is_dir():
        pytest.skip(f"KernelBench data not found at {path}")
    return path


@pytest.fixture(scope="session")
def samples_dir() -> Path:
    """Real 1.5B completions for the 30 problems: fixtures for extraction and checks."""
    path = SHARED / "samples" / "qwen2.5-coder-1.5b-kernelbench-oneshot"
    if not path.is_dir():
        pytest.skip(f"model samples not found at {path}")
    return path


@pytest.fixture(scope="session")
def eval_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One evaluator build cache per test session (the evaluator's and the region framework's tests)."""
    return tmp_path_factory.mktemp("evaluator_cache")


@pytest.fixture(scope="session")
def families_dir() -> Path:
    """The project's own tasks per op family, found by path: importing `graph` would need langgraph, which
    the GPU host lacks."""
    return REPO / "graph" / "demo_tasks" / "families"


@pytest.fixture(scope="session")
def have_nvrtc() -> None:
    """NVRTC's library (the nvidia-cuda-nvrtc wheel or torch's): compiles kernels without a GPU."""
    from evaluator.regions import nvrtc

    try:
        nvrtc.find_library()
    except nvrtc.NvrtcUnavailable as e:
        pytest.skip(f"libnvrtc not found: {e}")
