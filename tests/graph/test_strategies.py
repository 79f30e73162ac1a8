"""The four strategy graphs, scripted model and evaluator: fan-out, routing, bounds, selection, resume."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from graph_fakes import TASK, answer
from graph_fakes import judge as fake_judge
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from evaluator.verdict import make
from graph import BUILDERS, compile_graph
from nodes.context import STRATEGIES, Context


def run(name: str, ctx: Context, **kwargs: Any) -> dict[str, Any]:
    """The strategy in whole programs (region mode has its own tests: test_region_mode.py)."""
    return compile_graph(name, format="program", **kwargs).invoke({"task": TASK}, context=ctx)


def nodes_of(state: dict[str, Any]) -> list[str]:
    return [e["node"] for e in state["events"]]


def test_zero_shot_fans_out_n_samples_and_keeps_the_fastest_correct(scripted) -> None:
    script = {
        0: answer("wrong_output"),
        1: answer("correct", 1.2),
        2: answer("correct", 1.7),
        3: answer("compile_error"),
    }
    counter = itertools.count()
    model = scripted(lambda m, kw: script[next(counter)])
    state = run("zero_shot", Context(samples=4, temperature=0.8, seed=5))
    assert len(state["candidates"]) == 4
    assert sorted(c["sample"] for c in state["candidates"]) == [0, 1, 2, 3]
    assert state["best"]["verdict"]["speedup_eager"] == 1.7
    prompts = {json.dumps(messages) for messages, _ in model.calls}
    assert len(prompts) == 1, "every sample of a round gets the identical prompt (KV-cache reuse)"
    assert sorted(kw["seed"] for _, kw in model.calls) == [5, 6, 7, 8]
    assert nodes_of(state).count("generate") == 4 and nodes_of(state)[-2:] == ["evaluate", "select"]
    assert state["pending"] == []
    json.dumps(state)  # the whole state is plain JSON


def test_strict_correct_beats_a_faster_kernelbench_only_candidate(scripted) -> None:
    from tools.evaluator import EVALUATOR

    scripted(lambda m, kw: answer("correct", 1.0, body=f"# sampled with seed {kw['seed']}"))  # two programs

    def judge(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        loose = {
            "verdict": "correct",
            "correct_kernelbench": True,
            "correct_strict": False,
            "compiled": True,
            "speedup_eager": 3.0,
        }
        strict = {
            "verdict": "correct",
            "correct_kernelbench": True,
            "correct_strict": True,
            "compiled": True,
            "speedup_eager": 0.9,
        }
        return [{"job_id": job["job_id"], **(loose if i == 0 else strict)} for i, job in enumerate(jobs)]

    with EVALUATOR.use(judge):
        state = run("zero_shot", Context(samples=2))
    assert state["best"]["sample"] == 1


def test_refinement_is_bounded_by_rounds_and_feeds_back_one_instruction(scripted) -> None:
    model = scripted(lambda m, kw: answer("runtime_error", body="x = undefined_thing"))
    from tools.evaluator import EVALUATOR

    def judge(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        from graph_fakes import verdict

        log = (
            "warning: unused variable\nTraceback (most recent call last):\n"
            "NameError: name 'ext' is not defined"
        )
        return [{"job_id": j["job_id"], **verdict("runtime_error", log=log)} for j in jobs]

    with EVALUATOR.use(judge):
        state = run("iterative_refinement", Context(rounds=3, samples=2, stop_on="rounds"))
    assert len(state["candidates"]) == 6
    assert sorted({c["round"] for c in state["candidates"]}) == [0, 1, 2]
    assert nodes_of(state).count("triage") == 2
    assert state["feedback"]["source"] == "rules" and "`ext`" in state["feedback"]["instruction"]
    last_prompt = model.calls[-1][0][-1]["content"]
    assert "`ext` is used but never defined" in last_prompt
    assert "NameError: name 'ext' is not defined" in last_prompt
    assert "warning: unused variable" not in last_prompt, "the real error only, not the warnings around it"
    assert last_prompt.count("class ModelNew") == 1, "only the last candidate is shown"


def test_refinement_stops_at_the_first_correct_candidate(scripted) -> None:
    replies = iter([answer("wrong_output"), answer("correct", 0.8), answer("correct", 2.0)])
    model = scripted(lambda m, kw: next(replies))
    state = run("iterative_refinement", Context(rounds=5, stop_on="correct"))
    assert [c["verdict"]["verdict"] for c in state["candidates"]] == ["wrong_output", "correct"]
    assert len(model.calls_for("triage")) == 1, "a wrong output is diagnosed by the model"
    assert state["feedback"]["instruction"] == (
        "The line `o = fminf(x, 0);` computes wrong values: make it compute `max(x, 0)` for each element, "
        "e.g. `o = fmaxf(x, 0);`."
    )
    assert state["best"]["round"] == 1


def test_stop_on_faster_keeps_going_until_a_speedup(scripted) -> None:
    replies = iter([answer("correct", 0.8), answer("correct", 1.3), answer("correct", 2.0)])
    scripted(lambda m, kw: next(replies))
    state = run("iterative_refinement", Context(rounds=5, stop_on="faster"))
    assert len(state["candidates"]) == 2 and state["best"]["verdict"]["speedup_eager"] == 1.3
    assert state["feedback"]["category"] == "slow"


def test_agent_replans_when_stuck_then_stops_at_the_round_bound(scripted) -> None:
    model = scripted(lambda m, kw: answer("compile_error"))
    state = run("agent", Context(rounds=4, replans=1, retrieval_k=2, stop_on="correct"))
    order = nodes_of(state)
    assert order.count("analysis") == 2, order
    assert order.count("retrieval") == 2
    assert order.count("evaluate") == 4
    assert [e["outputs"]["route"] for e in state["events"] if e["node"] == "triage"] == [
        "retry",
        "replan",
        "retry",
    ]
    assert state["replans"] == 1
    replan_prompt = model.calls_for("plan")[1][0][-1]["content"]
    assert "A previous plan did not work" in replan_prompt
    generate_prompt = model.calls_for("generate")[0][0][-1]["content"]
    assert "fuse the relu" in generate_prompt
    assert "(borrow the technique, not its math): Example 0" in generate_prompt


def test_agent_solves_and_stops_early(scripted) -> None:
    replies = iter([answer("compile_error"), answer("correct", 1.5)])
    scripted(lambda m, kw: next(replies))
    state = run("agent", Context(rounds=4))
    assert nodes_of(state)[-1] == "select" and state["best"]["verdict"]["correct_strict"]
    assert nodes_of(state).count("generate") == 2


def test_profiling_guided_puts_the_profile_in_the_prompt(scripted) -> None:
    model = scripted(lambda m, kw: answer("correct", 1.1))
    state = run("profiling_guided", Context(backend="cpu"))
    assert "| relu | 100% | (cpu, None)" in model.calls[0][0][-1]["content"]
    assert nodes_of(state)[0] == "profile"
    run("profiling_guided", Context(backend="cpu", profiles="benchmarks/profiles"))
    assert "| relu | 100% | (cpu, benchmarks/profiles)" in model.calls[-1][0][-1]["content"]


def test_naive_agent_preset_replays_the_whole_conversation_and_says_fix_it(scripted) -> None:
    model = scripted(lambda m, kw: answer("compile_error"))
    state = run("agent", Context.from_preset("naive-agent", rounds=3))
    assert len(state["candidates"]) == 3, "explicit overrides beat the preset's 10 rounds"
    messages, kwargs = model.calls_for("generate")[-1]
    assert kwargs["temperature"] == 0.0
    assert [m["role"] for m in messages[-4:]] == ["assistant", "user", "assistant", "user"]
    assert messages[-1]["content"].endswith("Fix it.")
    assert "rewrite the whole forward pass" in messages[0]["content"].lower()
    assert model.calls_for("triage") == [], "the naive agent never diagnoses"


def test_a_prompt_override_replaces_the_packaged_prompt(scripted, tmp_path) -> None:
    model = scripted(lambda m, kw: answer("correct", 1.1))
    run("zero_shot", Context(prompts={"generate": "CUSTOM TEXT\n{{source}}"}))
    assert model.calls[-1][0] == [{"role": "user", "content": "CUSTOM TEXT\n" + TASK["source"].strip()}]
    path = tmp_path / "gen.md"
    path.write_text("SYS FROM FILE\n<!-- user -->\nUSER {{source}}")
    run("zero_shot", Context(prompts={"generate": str(path)}))
    assert model.calls[-1][0][0] == {"role": "system", "content": "SYS FROM FILE"}


@pytest.mark.parametrize("name", ["zero_shot", "iterative_refinement"])
def test_deferred_evaluation_interrupts_with_jobs_and_resumes_with_results(scripted, name) -> None:
    scripted(lambda m, kw: answer("wrong_output", body=f"# seed {kw['seed']}"))  # a program per sample
    graph = compile_graph(name, checkpointer=InMemorySaver(), format="program")
    config = {"configurable": {"thread_id": "t1"}}
    ctx = Context(evaluator="deferred", samples=2, rounds=2, stop_on="rounds", backend="cpu")
    out = graph.invoke({"task": TASK}, config=config, context=ctx)
    rounds = 0
    while "__interrupt__" in out:
        payload = out["__interrupt__"][0].value
        assert payload["kind"] == "evaluate" and len(payload["jobs"]) == 2
        job = payload["jobs"][0]
        assert set(job) == {"job_id", "problem", "candidate", "code", "config"}
        assert job["job_id"] == f"Tiny_Relu/r{rounds}s0"
        assert job["problem"]["source"] == TASK["source"] and job["config"]["backend"] == "cpu"
        json.dumps(payload)
        # answer out of order, as a job file's results may come back
        results = [
            {"job_id": j["job_id"], **make("correct", speedup_eager=1.0 + rounds + i)}
            for i, j in reversed(list(enumerate(payload["jobs"])))
        ]
        out = graph.invoke(Command(resume=results), config=config, context=ctx)
        rounds += 1
    assert rounds == (1 if name == "zero_shot" else 2)
    assert out["best"]["verdict"]["speedup_eager"] == rounds + 1  # the last round's faster sample
    assert all("job_id" not in c["verdict"] for c in out["candidates"])


def test_a_missing_deferred_result_becomes_a_runtime_error(scripted) -> None:
    scripted(lambda m, kw: answer("correct"))
    graph = compile_graph("zero_shot", checkpointer=InMemorySaver(), format="program")
    config = {"configurable": {"thread_id": "t2"}}
    ctx = Context(evaluator="deferred")
    graph.invoke({"task": TASK}, config=config, context=ctx)
    out = graph.invoke(Command(resume={"other/r0s0": {"verdict": "correct"}}), config=config, context=ctx)
    assert out["candidates"][0]["verdict"]["verdict"] == "runtime_error"
    assert "no evaluator result" in out["candidates"][0]["verdict"]["log_tail"]


def test_every_builder_compiles_for_studio_without_a_checkpointer() -> None:
    for name, build in BUILDERS.items():
        graph = build().compile()
        assert graph.checkpointer is None
        drawn = graph.get_graph()
        assert "select" in drawn.nodes, name
    with pytest.raises(KeyError, match="known"):
        compile_graph("nope")


def test_a_plain_dict_context_as_studio_sends_it_works(scripted) -> None:
    scripted(lambda m, kw: answer("correct", 1.1))
    state = compile_graph("zero_shot", format="program").invoke(
        {"task": TASK}, context={"samples": 2, "preset": "cpu-smoke"}
    )
    assert len(state["candidates"]) == 2
    assert all(e["inputs"]["backend"] == "cpu" for e in state["events"] if e["node"] == "evaluate")


def test_a_graph_run_uses_the_preset_resolved_when_the_context_was_built(scripted, monkeypatch) -> None:
    scripted(lambda m, kw: answer("correct", 1.1))
    ctx = Context(preset="cpu-smoke", samples=2)

    def no_second_resolution(name: str) -> dict[str, Any]:
        raise AssertionError(f"preset {name} resolved again")

    monkeypatch.setattr("nodes.presets.preset_values", no_second_resolution)
    state = run("zero_shot", ctx)
    assert len(state["candidates"]) == 2
    assert all(e["inputs"]["backend"] == "cpu" for e in state["events"] if e["node"] == "evaluate")


@pytest.mark.parametrize("name", STRATEGIES)
def test_the_input_schema_is_the_task_alone(name: str) -> None:
    schema = compile_graph(name).get_input_jsonschema()
    assert list(schema["properties"]) == ["task"] and schema["required"] == ["task"]
    assert set(schema["$defs"]["Task"]["properties"]) == {"name", "level", "problem_id", "source"}


def test_a_program_judged_once_is_not_judged_again(scripted) -> None:
    """Two samples that wrote the same program are one job; their verdict is shared, and says whose it is."""
    from tools.evaluator import EVALUATOR

    scripted(lambda m, kw: answer("correct", 1.2))
    seen: list[dict[str, Any]] = []

    def judge(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        seen.extend(jobs)
        return fake_judge(jobs)

    with EVALUATOR.use(judge):
        state = run("zero_shot", Context(samples=3))
    assert [j["job_id"] for j in seen] == ["Tiny_Relu/r0s0"]
    verdicts = [c["verdict"] for c in state["candidates"]]
    assert [v["verdict"] for v in verdicts] == ["correct"] * 3 and "reused_verdict_of" not in verdicts[0]
    assert [v.get("reused_verdict_of") for v in verdicts[1:]] == ["r0s0", "r0s0"]
