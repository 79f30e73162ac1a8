"""Region coverage over a KernelBench-format set: per problem captured / offered / kinds / what is left,
per level the counts, a broken file listed with its reason while the others are counted."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from benchmarks.coverage import coverage, main
from graph.demo_tasks.families import FAMILIES_DIR


def test_the_family_tasks_say_what_is_offered_and_what_is_left(tmp_path: Path) -> None:
    report = coverage(FAMILIES_DIR, "moderate", None)
    rows = {r["problem"]: r for r in report["rows"]}
    assert rows["Max_Pool_2d_Window"]["offered"] and rows["Max_Pool_2d_Window"]["kinds_offered"] == ["window"]
    assert rows["Cumulative_Sum_Rows"]["kinds_offered"] == ["reduce"]  # a scan: the reduce skeleton's rows
    assert rows["Argmax_Over_Channels"]["kinds_offered"] == ["reduce"]  # int64 indices the skeleton stores
    assert rows["Transposed_Conv_2d_Stride"]["kinds_offered"] == ["contraction"]
    entropy = rows["Cross_Entropy_Logits"]  # decomposed: log_softmax, a gather left to PyTorch, a mean
    assert entropy["kinds_offered"] == ["map", "reduce", "reduce"] and "torch.gather" in entropy["kept_ops"]
    assert rows["Branch_On_Data"]["kinds_offered"] == ["map", "map", "reduce"]  # both branches, if-converted
    assert rows["L2_Normalize_Functional"]["kinds_offered"] == ["map", "map", "reduce"]  # decomposed
    assert rows["BCE_With_Logits"]["kinds_offered"] == ["map", "reduce"]
    assert "torch.gather" in rows["NLL_Loss"]["kept_ops"] and rows["NLL_Loss"]["offered"]
    assert not rows["Pixel_Shuffle"]["offered"]  # a pure layout op: nothing to compute
    level1 = report["summary"]["1"]
    files = len(list((FAMILIES_DIR / "level1").glob("*.py")))
    assert level1["problems"] == files and level1["captured"] == files
    assert level1["offered"] == sum(r["offered"] for r in report["rows"] if r["level"] == 1)
    assert report["summary"]["all"]["problems"] == len(rows)


def test_a_broken_file_is_listed_and_the_rest_counted(tmp_path: Path) -> None:
    level = tmp_path / "set" / "level1"
    level.mkdir(parents=True)
    shutil.copy(FAMILIES_DIR / "level1" / "1_Max_Pool_2d_Window.py", level)
    (level / "2_Broken.py").write_text("def forward(:\n")
    assert main([str(tmp_path / "set"), "--out", str(tmp_path / "out"), "--profiles", ""]) == 0
    report = json.loads((tmp_path / "out" / "set.json").read_text())
    assert [r["problem"] for r in report["rows"]] == ["Max_Pool_2d_Window"]
    assert "2_Broken.py" in report["summary"]["all"]["unreadable_files"][0]
    assert "| 1 | 1 | 1 | 1 | window 1 |" in (tmp_path / "out" / "set.md").read_text()


def test_a_missing_set_is_one_clear_line(tmp_path: Path, capsys) -> None:
    assert main([str(tmp_path / "nowhere"), "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith("coverage: ")
