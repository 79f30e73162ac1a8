"""Context and presets: every field described (Studio shows it), presets valid and applied once, at build."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from pydantic import TypeAdapter

from graph import BUILDERS
from nodes.context import STRATEGIES, Context, describe, settings
from nodes.presets import PRESETS, preset_values
from nodes.prompt_files import PROMPT_ROOT
from regions.model import AMBITIONS


def test_every_context_field_has_a_description_in_the_json_schema() -> None:
    schema = TypeAdapter(Context).json_schema()
    fields = {f.name for f in dataclasses.fields(Context)}
    assert set(schema["properties"]) == fields
    for name, prop in schema["properties"].items():
        assert len(prop.get("description", "")) > 20, name
    assert schema["properties"]["ambition"]["enum"] == [*AMBITIONS, "autotune"]
    assert describe()["samples"].startswith("n:")


def test_ambitions_match_the_prompt_folders() -> None:
    assert {p.name for p in PROMPT_ROOT.iterdir() if p.is_dir()} - {"common"} == set(AMBITIONS)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_is_a_valid_context(name: str) -> None:
    ctx = TypeAdapter(Context).validate_python(preset_values(name))
    assert isinstance(ctx, Context)
    assert dataclasses.replace(Context(preset=name), preset=None) == Context.from_preset(name)


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
    ctx = Context(preset="naive-agent", samples=4)
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


def test_the_strategy_names_have_one_source() -> None:
    graphs = json.loads((Path(__file__).resolve().parents[2] / "langgraph.json").read_text())["graphs"]
    ids = [*STRATEGIES, *(f"{name}_program" for name in STRATEGIES)]  # each strategy in both formats
    assert graphs == {graph_id: f"./graph/studio.py:{graph_id}" for graph_id in ids}
    assert tuple(BUILDERS) == STRATEGIES
    assert {p.strategy for p in PRESETS.values()} <= set(STRATEGIES)


def test_a_preset_is_applied_once_when_the_context_is_built(monkeypatch) -> None:
    ctx = Context(preset="naive-agent", samples=4)

    def no_second_resolution(name: str) -> dict[str, object]:
        raise AssertionError(f"preset {name} resolved again")

    monkeypatch.setattr("nodes.presets.preset_values", no_second_resolution)
    assert settings(SimpleNamespace(context=ctx)) is ctx
    assert (ctx.rounds, ctx.samples, ctx.preset) == (10, 4, "naive-agent")
