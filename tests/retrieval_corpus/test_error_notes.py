"""Error notes parse, each matches its own sample error line, and matching follows the log's order."""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval_corpus.error_notes import (
    ErrorNoteError,
    classify,
    load_error_notes,
    match_error_notes,
    note_for,
    parse_note,
    triage_rules,
)

NOTES = load_error_notes()


def test_there_are_notes_for_each_phase() -> None:
    assert len(NOTES) >= 12
    assert {n.phase for n in NOTES} == {"import", "compile", "runtime", "correctness", "strict"}


@pytest.mark.parametrize("note", NOTES, ids=[n.id for n in NOTES])
def test_note_matches_its_sample_first(note) -> None:
    assert note.body and "Fix" in note.body
    assert match_error_notes(note.sample)[0].id == note.id


def test_earliest_error_comes_first() -> None:
    log = (
        "main.cpp:4:49: error: 'my_op' was not declared in this scope\n"
        "ninja: build stopped: subcommand failed.\n"
        "RuntimeError: Error building extension 'my_ext'\n"
    )
    assert [n.id for n in match_error_notes(log)] == ["not_declared_in_scope", "build_failed_generic"]
    assert match_error_notes("all good") == []


def test_malformed_note_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ErrorNoteError, match="front matter"):
        parse_note("x", "# no front matter\n")
    with pytest.raises(ErrorNoteError, match="patterns"):
        parse_note("x", '---\ntitle: t\nphase: compile\npatterns: ["(unclosed"]\nsample: s\n---\nbody\n')


def test_note_for_answers_to_ids_and_triage_aliases() -> None:
    assert note_for("illegal_memory_access").id == "illegal_memory_access"
    assert note_for("illegal_access").id == "illegal_memory_access"
    assert note_for("missing_import").id == "load_inline_not_imported"
    assert note_for("no_such_category") is None
    aliases = [a for n in NOTES for a in n.aliases]
    assert len(aliases) == len(set(aliases)), "an alias must name one note"


def test_the_notes_carry_triages_rules_in_matching_order() -> None:
    assert [rule.category for rule in triage_rules()] == [
        "missing_import", "undefined_name", "functions_mismatch", "undeclared", "module_called",
        "illegal_access", "wrong_shape"]
    rule, match = classify("NameError: name 'load_inline' is not defined")
    assert rule.category == "missing_import", "an earlier rule wins over a later one that matches too"
    rule, match = classify('cuda.cu(12): error: identifier "blockDim_x" is undefined')
    assert (rule.category, next(g for g in match.groups() if g)) == ("undeclared", "blockDim_x")
    assert classify("Output SHAPE differs")[0].category == "wrong_shape", "(?i) makes a rule ignore case"
    assert classify("'MODULE' OBJECT IS NOT CALLABLE") is None, "rules match case-sensitively by default"


def test_malformed_or_ambiguous_rules_are_refused() -> None:
    head = "---\ntitle: t\nphase: compile\npatterns: []\nsample: s\n"
    with pytest.raises(ErrorNoteError, match="rules"):
        parse_note("x", head + 'rules: [{"order": 1, "pattern": "p"}]\n---\nbody\n')
    with pytest.raises(ErrorNoteError, match="rules"):
        parse_note("x", head + 'rules: [{"order": 1, "category": "c", "pattern": "(unclosed"}]\n---\nbody\n')
    twice = [parse_note(i, head + f'rules: [{{"order": 1, "category": "{i}", "pattern": "p"}}]\n---\nb\n')
             for i in ("x", "y")]
    with pytest.raises(ErrorNoteError, match="unique"):
        triage_rules(twice)
