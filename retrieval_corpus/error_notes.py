"""Short notes on common compile and runtime errors of load_inline CUDA code, and triage's rule table.

Each `errors/<id>.md` starts with a front matter block:

    ---
    title: one line
    phase: import | compile | runtime | correctness | strict
    patterns: ["regex", ...]        (a JSON list; matched case-insensitively against the error log)
    sample: one real-looking error line the patterns must match
    aliases: ["triage category", ...]   (optional JSON list: names `note_for` also answers to)
    rules: [{"order": 1, "category": "...", "pattern": "regex"}, ...]   (optional JSON list, see below)
    ---

followed by the note (cause and fix). Standard library only.

The notes' `rules` together are the triage node's one rule table: the first rule by `order` whose pattern
occurs in the real error names the failure's category (triage's instruction is the prompt file of that
category, filled with the pattern's first captured group). Rule patterns are matched as written,
case-sensitively unless they start with `(?i)`, because a rule may capture a name from the log.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

PHASES = ("import", "compile", "runtime", "correctness", "strict")


class ErrorNoteError(ValueError):
    """A note file that breaks the format above."""


@dataclass(frozen=True)
class ErrorRule:
    """A triage rule: where `pattern` occurs in the real error, the failure is `category`."""

    order: int
    category: str
    pattern: re.Pattern[str]


@dataclass(frozen=True)
class ErrorNote:
    id: str
    title: str
    phase: str
    patterns: tuple[str, ...]
    sample: str
    body: str
    aliases: tuple[str, ...] = ()
    rules: tuple[ErrorRule, ...] = ()

    def first_match(self, log: str) -> int | None:
        """Offset of the earliest pattern match in `log`, or None."""
        starts = [m.start() for p in self.patterns if (m := re.search(p, log, re.IGNORECASE))]
        return min(starts) if starts else None

    def to_dict(self) -> dict[str, str]:
        return {"id": self.id, "title": self.title, "phase": self.phase, "note": self.body}


def errors_dir() -> Path:
    return Path(__file__).resolve().parent / "errors"


def parse_note(note_id: str, text: str) -> ErrorNote:
    lines = text.splitlines()
    try:
        end = lines.index("---", 1) if lines and lines[0] == "---" else -1
    except ValueError:
        end = -1
    if end < 0:
        raise ErrorNoteError(f"{note_id}: no front matter between '---' lines")
    fields = {}
    for line in lines[1:end]:
        key, sep, value = line.partition(":")
        if not sep:
            raise ErrorNoteError(f"{note_id}: front matter line without ':': {line!r}")
        fields[key.strip()] = value.strip()
    missing = {"title", "phase", "patterns", "sample"} - set(fields)
    if missing:
        raise ErrorNoteError(f"{note_id}: front matter lacks {sorted(missing)}")
    if fields["phase"] not in PHASES:
        raise ErrorNoteError(f"{note_id}: phase {fields['phase']!r} not in {PHASES}")
    try:
        patterns = json.loads(fields["patterns"])
        for p in patterns:
            re.compile(p)
    except (json.JSONDecodeError, re.error, TypeError) as exc:
        raise ErrorNoteError(f"{note_id}: patterns must be a JSON list of regexes ({exc})") from exc
    try:
        aliases = json.loads(fields.get("aliases", "[]"))
    except json.JSONDecodeError as exc:
        raise ErrorNoteError(f"{note_id}: aliases must be a JSON list ({exc})") from exc
    return ErrorNote(
        id=note_id,
        title=fields["title"],
        phase=fields["phase"],
        patterns=tuple(patterns),
        sample=fields["sample"],
        body="\n".join(lines[end + 1 :]).strip(),
        aliases=tuple(aliases),
        rules=_parse_rules(note_id, fields.get("rules", "[]")),
    )


def _parse_rules(note_id: str, value: str) -> tuple[ErrorRule, ...]:
    try:
        return tuple(
            ErrorRule(order=int(r["order"]), category=str(r["category"]), pattern=re.compile(r["pattern"]))
            for r in json.loads(value)
        )
    except (json.JSONDecodeError, re.error, TypeError, KeyError, ValueError) as exc:
        raise ErrorNoteError(
            f"{note_id}: rules must be a JSON list of {{order, category, pattern}} objects ({exc})"
        ) from exc


def load_error_notes(root: Path | None = None) -> list[ErrorNote]:
    base = root or errors_dir()
    return [parse_note(p.stem, p.read_text(encoding="utf-8")) for p in sorted(base.glob("*.md"))]


@lru_cache(maxsize=1)
def _packaged_notes() -> tuple[ErrorNote, ...]:
    return tuple(load_error_notes())


def match_error_notes(log: str, notes: list[ErrorNote] | None = None, limit: int = 3) -> list[ErrorNote]:
    """Notes whose patterns occur in `log`, earliest first (the first error is usually the cause)."""
    pool = notes if notes is not None else list(_packaged_notes())
    found = [(pos, note.id, note) for note in pool if (pos := note.first_match(log)) is not None]
    return [note for _, _, note in sorted(found)[:limit]]


def note_for(name: str, notes: list[ErrorNote] | None = None) -> ErrorNote | None:
    """The note with this id or alias (e.g. a triage category such as 'illegal_access'), if any."""
    pool = notes if notes is not None else list(_packaged_notes())
    return next((n for n in pool if name == n.id or name in n.aliases), None)


def triage_rules(notes: list[ErrorNote] | None = None) -> list[ErrorRule]:
    """Every note's rules in matching order; two rules with one order would make the first match ambiguous."""
    pool = notes if notes is not None else list(_packaged_notes())
    rules = sorted((rule for note in pool for rule in note.rules), key=lambda rule: rule.order)
    orders = [rule.order for rule in rules]
    if len(orders) != len(set(orders)):
        raise ErrorNoteError(f"rule orders must be unique: {orders}")
    return rules


def classify(error: str, notes: list[ErrorNote] | None = None) -> tuple[ErrorRule, re.Match[str]] | None:
    """The first rule whose pattern occurs in the real error, with its match; None when no rule applies."""
    for rule in triage_rules(notes):
        if match := rule.pattern.search(error):
            return rule, match
    return None
