"""The twin coverage count: a region the CPU can check (its own size, the problem shrunk, or narrowed on its
own) and one it cannot, on problems written here."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.twin_coverage import main

HEADER = "import torch\nimport torch.nn as nn\n\n"
FOOTER = "\ndef get_init_inputs():\n    return []\n"

# a convolution sized in get_inputs: only narrowed on its own does the CPU reach it
CONV = (
    HEADER
    + """class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(16, 32, 3, padding=1)

    def forward(self, x):
        return self.conv(x)

def get_inputs():
    return [torch.rand(8, 16, 96, 96)]
"""
    + FOOTER
)

# a layer norm over sizes its step names: no shrink of the problem reaches it, and narrowed it no longer runs
NORM = (
    HEADER
    + """class Model(nn.Module):
    def forward(self, x):
        return torch.nn.functional.layer_norm(x, (1024, 1024))

def get_inputs():
    return [torch.rand(64, 1024, 1024)]
"""
    + FOOTER
)


def test_checked_and_unchecked_regions_are_counted(tmp_path: Path, capsys) -> None:
    level = tmp_path / "level1"
    level.mkdir()
    (level / "1_Conv.py").write_text(CONV)
    (level / "2_Norm.py").write_text(NORM)
    (level / "3_Skipped.py").write_text(NORM)
    out = tmp_path / "coverage.json"
    assert main([str(tmp_path), "--skip", "L1/3", "--out", str(out)]) == 0
    summary = json.loads(out.read_text())
    rows = {row["problem"]: row for row in summary["rows"]}
    assert set(rows) == {"L1/Conv", "L1/Norm"}
    assert all(rows["L1/Conv"][cut]["unchecked"] == [] for cut in ("moderate", "aggressive"))
    unchecked = rows["L1/Norm"]["moderate"]["unchecked"]
    assert [r["ops"] for r in unchecked] == [["layer_norm"]]
    assert summary["checked"] == summary["regions"] - 2  # the layer norm at both cuts
    assert "no CPU check" in capsys.readouterr().out
