"""The project's own small tasks in KernelBench format, used by the default run.

Sized so the reference runs in milliseconds on a laptop CPU and a C++ or CUDA candidate is quick to check;
they are original problems, not copies of KernelBench. Level 0 marks them in tables and results.
"""

from __future__ import annotations

from pathlib import Path

DEMO_DIR = Path(__file__).resolve().parent
DEMO_LEVEL = 0


def demo_paths() -> list[Path]:
    """The task files, ordered by their problem number (the `N_` prefix, as in KernelBench)."""
    files = [p for p in DEMO_DIR.glob("*.py") if p.name.split("_", 1)[0].isdigit()]
    return sorted(files, key=lambda p: int(p.name.split("_", 1)[0]))
