"""The greedy region jobs of the shared problems are byte-identical to the committed golden record.

The record (golden_jobs.json, made with golden_jobs.py before the region framework left evaluator/) holds
sha256 of every contract prompt, assembled program and job line the zero_shot graph sends for the 30
shared problems at each ambition. A refactor that changes any byte the model reads or the GPU host
receives fails here; a change meant to alter them rewrites the record on purpose and says why.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from golden_jobs import GOLDEN, records


@pytest.mark.slow
def test_greedy_region_jobs_match_the_golden_record(kernelbench_dir: Path) -> None:
    golden = json.loads(GOLDEN.read_text())
    now = records(kernelbench_dir)
    assert sorted(now) == sorted(golden)
    changed = sorted(key for key in golden if now[key] != golden[key])
    assert changed == [], f"{len(changed)} of {len(golden)} differ, e.g. {changed[:3]}"
