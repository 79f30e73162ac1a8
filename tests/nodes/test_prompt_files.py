"""Prompt files: every ambition and backend has a complete prompt; overrides by path or text."""

from __future__ import annotations

import re

import pytest

from nodes.prompt_files import (
    COMMON,
    PROMPT_ROOT,
    build_messages,
    fragment,
    load_template,
    prompt_path,
    render,
)
from regions.model import AMBITIONS

GENERATE_VALUES = {"source": "class Model: ...", "context": "CTX", "feedback": "FB"}


@pytest.mark.parametrize("ambition", AMBITIONS)
@pytest.mark.parametrize("backend", ["cuda", "cpu"])
def test_generate_prompt_fills_every_placeholder(ambition: str, backend: str) -> None:
    messages = build_messages("generate", ambition, backend, None, GENERATE_VALUES)
    assert [m["role"] for m in messages] == ["system", "user"]
    text = messages[0]["content"] + messages[1]["content"]
    assert "{{" not in text and "class Model: ..." in messages[1]["content"]
    assert (
        messages[1]["content"].index("class Model")
        < messages[1]["content"].index("CTX")
        < messages[1]["content"].index("FB")
    ), "what changes least comes first (shared prefix)"
    if backend == "cpu":
        assert "cuda_sources" not in text.replace("(no cuda_sources)", "") and "cpp_sources" in text
        assert prompt_path("generate", ambition, backend).name == "generate.cpu.md"
    else:
        assert "__global__" in text


def test_ambitions_differ_in_what_they_allow() -> None:
    texts = {a: load_template("generate", a, "cuda") for a in AMBITIONS}
    assert "Keep matrix multiplications" in texts["conservative"]
    assert "whole forward pass" in texts["aggressive"]
    assert len(set(texts.values())) == 3


@pytest.mark.parametrize(
    "node,values",
    [
        ("analysis", {"source": "S", "profile": "P", "previous": ""}),
        ("triage", {"source": "S", "code": "C", "error": "E"}),
        ("feedback", {"code": "C", "verdict": "V", "error": "E", "instruction": "I", "note": ""}),
    ],
)
def test_other_nodes_have_prompts_for_every_ambition(node: str, values: dict[str, str]) -> None:
    for ambition in AMBITIONS:
        text = "".join(m["content"] for m in build_messages(node, ambition, "cuda", None, values))
        assert "{{" not in text, (node, ambition)


def test_override_by_text_and_by_path(tmp_path) -> None:
    assert render(
        load_template("generate", "moderate", "cuda", {"generate": "X {{source}} {{nope}}"}), {"source": "S"}
    ) == [{"role": "user", "content": "X S {{nope}}"}]
    path = tmp_path / "mine.md"
    path.write_text("SYS\n<!-- user -->\nUSER {{source}}\n")
    assert build_messages("generate", "moderate", "cuda", {"generate": str(path)}, {"source": "S"}) == [
        {"role": "system", "content": "SYS"},
        {"role": "user", "content": "USER S"},
    ]
    with pytest.raises(FileNotFoundError):
        load_template("generate", "moderate", "cuda", {"generate": str(tmp_path / "missing.md")})


def test_unknown_ambition_is_refused() -> None:
    with pytest.raises(ValueError, match="conservative"):
        prompt_path("generate", "reckless", "cuda")
    with pytest.raises(ValueError):
        prompt_path("feedback", "common", "cuda")


def test_empty_sections_leave_no_gap_but_source_blank_lines_survive() -> None:
    source = "import torch\n\n\nclass Model:\n    pass"
    messages = build_messages(
        "generate", "moderate", "cuda", None, {"source": source, "context": "", "feedback": ""}
    )
    assert source in messages[1]["content"]
    assert "\n\n\n\n" not in messages[1]["content"]


FRAGMENTS = sorted(p for p in (PROMPT_ROOT / COMMON).glob("*/*.md"))


@pytest.mark.parametrize("path", FRAGMENTS, ids=[f"{p.parent.name}/{p.stem}" for p in FRAGMENTS])
def test_every_fragment_fills_and_keeps_its_text_as_written(path) -> None:
    name = f"{path.parent.name}/{path.stem}"
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n") and not text.endswith("\n\n"), "one final newline, which fragment() drops"
    values = {key: f"<{key}>" for key in re.findall(r"\{\{(\w+)\}\}", text)}
    assert fragment(name, values) == text.removesuffix("\n").replace("{{", "<").replace("}}", ">")


def test_fragments_fill_in_one_pass_and_keep_blank_lines() -> None:
    reply = fragment("generate/naive_reply", {"verdict": "{{log}}", "log": "A\n\n\n\nB"})
    assert reply == "The evaluator reported {{log}}:\nA\n\n\n\nB\nFix it."
