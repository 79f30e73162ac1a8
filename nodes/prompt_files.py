"""Prompt files: ``nodes/prompts/<ambition>/<node>.md`` (``<node>.cpu.md`` for the cpu backend), swappable.

Nodes whose prompt does not depend on the ambition read ``nodes/prompts/common/<node>.md``.

A prompt file is a template. Text before a line ``<!-- user -->`` is the system message, text after it the
user message; without the marker the whole text is the user message. ``{{name}}`` placeholders are filled
from the values a node passes; unknown placeholders are left as written so a typo stays visible.

Prompt text a node assembles in code (a section heading, an instruction) is a fragment:
``nodes/prompts/common/<node>/<name>.md``, filled the same way but otherwise taken byte for byte.
"""

from __future__ import annotations

import re
from pathlib import Path

PROMPT_ROOT = Path(__file__).resolve().parent / "prompts"
USER_MARKER = "<!-- user -->"
COMMON = "common"  # prompts that do not depend on the ambition (feedback, triage, the fragments)
_PLACEHOLDER = re.compile(r"\{\{\s*([a-z_]+)\s*\}\}")
_BLANK_RUN = re.compile(r"\n([ \t]*\n){3,}")  # three or more blank lines: only empty sections make those


def prompt_path(node: str, ambition: str, backend: str) -> Path:
    """The packaged prompt of a node: ambition folder before ``common/``, backend variant before generic."""
    if ambition == COMMON or not (PROMPT_ROOT / ambition).is_dir():
        known = sorted(p.name for p in PROMPT_ROOT.iterdir() if p.is_dir() and p.name != COMMON)
        raise ValueError(f"unknown ambition {ambition!r}; prompt folders: {known}")
    for folder in (PROMPT_ROOT / ambition, PROMPT_ROOT / COMMON):
        for name in (f"{node}.{backend}.md", f"{node}.md"):
            if (folder / name).is_file():
                return folder / name
    raise FileNotFoundError(f"no prompt file for node {node!r} (ambition {ambition}, backend {backend})")


def load_template(node: str, ambition: str, backend: str, overrides: dict[str, str] | None = None) -> str:
    """A node's template: an override (a file path or the text itself) wins over the packaged file."""
    override = (overrides or {}).get(node)
    if override:
        if "\n" not in override and len(override) < 1024:
            candidate = Path(override).expanduser()
            if candidate.is_file():
                return candidate.read_text()
            if candidate.suffix in {".md", ".txt"}:
                raise FileNotFoundError(f"prompt override for {node!r} names a missing file: {override}")
        return override
    return prompt_path(node, ambition, backend).read_text()


def fill(template: str, values: dict[str, str]) -> str:
    """The template with its known placeholders filled (one pass: filled-in text is never read again)."""
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def fragment(name: str, values: dict[str, str] | None = None) -> str:
    """A filled fragment, ``common/<name>.md`` without its final newline (fragments join byte for byte)."""
    text = (PROMPT_ROOT / COMMON / f"{name}.md").read_text(encoding="utf-8")
    return fill(text.removesuffix("\n"), values or {})


def render(template: str, values: dict[str, str]) -> list[dict[str, str]]:
    """Fill the placeholders and split into chat messages (system first, so prompts share their prefix)."""
    text = fill(template, values)
    text = _BLANK_RUN.sub("\n\n", text)  # empty optional sections leave no gaps
    if USER_MARKER in text:
        system, user = text.split(USER_MARKER, 1)
        messages = [{"role": "system", "content": system.strip()}] if system.strip() else []
        return [*messages, {"role": "user", "content": user.strip()}]
    return [{"role": "user", "content": text.strip()}]


def build_messages(
    node: str, ambition: str, backend: str, overrides: dict[str, str] | None, values: dict[str, str]
) -> list[dict[str, str]]:
    """Load, fill and split a node's prompt in one call."""
    return render(load_template(node, ambition, backend, overrides), values)
