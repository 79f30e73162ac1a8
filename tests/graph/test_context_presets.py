"""Context and presets: every field described (Studio shows it), presets valid and resolved as documented."""

from __future__ import annotations

import dataclasses

import pytest
from pydantic import TypeAdapter

from graph.context import AMBITIONS, Context, describe, settings
from graph.presets import PRESETS, preset_values
from nodes.prompt_files import PROMPT_ROOT


def test_every_context_field_has_a_description_in_the_json_schema() -> None:
    schema = TypeAdapter(Context).json_schema()
    fields = {f.name for f in dataclasses.fields(Context)}
    assert set(schema["properties"]) == fields
    for name, prop in schema["properties"].items():
        assert len(prop.get("description", "")) > 20, name
    assert schema["properties"]["ambition"]["enum"] == list(AMBITIONS)
    assert describe()["samples"].startswith("n:")


def test_ambitions_match_the_prompt_folders() -> None:
    assert {p.name for p in PROMPT_ROOT.iterdir() if p.is_dir()} - {"common"} == set(AMBITIONS)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_is_a_valid_context(name: str) -> None:
    ctx = TypeAdapter(Context).validate_python(preset_values(name))
    assert isinstance(ctx, Context)
    assert dataclasses.replace(Context(preset=name).resolved(), preset=None) == Context.from_preset(name)


def test_presets_reproduce_the_papers_agents() -> None:
    naive, repaired = Context.from_preset("naive-agent"), Context.from_preset("repaired-agent")
    assert (naive.ambition, naive.samples, naive.feedback, naive.temperature) == (
        "aggressive",
        1,
        "naive",
        0.0,
    )
    assert naive.rounds >= 8
    assert repaired.feedback == "focused" and repaired.samples > 1 and repaired.temperature > 0
    assert PRESETS["naive-agent"].strategy == PRESETS["repaired-agent"].strategy == "agent"


def test_preset_applies_under_explicit_fields_only() -> None:
    ctx = Context(preset="naive-agent", samples=4).resolved()
    assert ctx.samples == 4 and ctx.ambition == "aggressive"
    assert Context.from_preset("naive-agent", rounds=3).rounds == 3
    with pytest.raises(KeyError, match="repaired-agent"):
        preset_values("no-such-preset")


def test_settings_accepts_a_context_a_dict_or_nothing() -> None:
    class Runtime:
        def __init__(self, context: object) -> None:
            self.context = context

    assert settings(Runtime(None)) == Context()
    assert settings(Runtime({"samples": 3, "preset": "cpu-smoke"})).backend == "cpu"
    assert settings(Runtime(Context(samples=2))).samples == 2
