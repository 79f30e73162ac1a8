import json
from pathlib import Path

from evaluator.extract import extract_candidate


def test_takes_the_block_that_defines_model_new() -> None:
    text = "Intro\n```bash\npip install x\n```\n```python\nclass ModelNew:\n    pass\n```\nbye"
    assert extract_candidate(text) == "class ModelNew:\n    pass\n"


def test_last_defining_block_wins_and_cut_off_fences_count() -> None:
    text = "```python\nclass ModelNew:\n    a = 1\n```\nfixed:\n```python\nclass ModelNew:\n    a = 2\n"
    assert "a = 2" in extract_candidate(text)


def test_no_code_is_none_never_an_exception() -> None:
    assert extract_candidate("") is None
    assert extract_candidate("just words") is None
    assert extract_candidate("```python\nprint('no model')\n```") is None


def test_real_completions(samples_dir: Path) -> None:
    found = {}
    for f in sorted(samples_dir.glob("level*_problem*.json")):
        found[f.stem] = extract_candidate(json.loads(f.read_text())["completion"])
    assert len(found) == 30
    # The 1.5B model repeats until max_tokens on some level-2/3 problems and closes no usable block.
    missing = sorted(k for k, v in found.items() if v is None)
    assert missing == [
        "level2_problem3",
        "level2_problem7",
        "level2_problem8",
        "level3_problem4",
        "level3_problem8",
    ]
    assert all("class ModelNew" in v for v in found.values() if v)
