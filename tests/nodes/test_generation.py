"""The generation prompt: shared prefix first, focused feedback or naive history, backend-aware examples."""

from __future__ import annotations

from nodes.context import Context
from nodes.generation import EXAMPLES_DONE, OMITTED, generation_messages, sample_seed, solution_excerpt

TASK = {"name": "T", "level": 1, "problem_id": 1, "source": "class Model: ..."}
LAST = {"id": "r0s0", "round": 0, "completion": "```python\nclass ModelNew: pass\n```",
        "code": "class ModelNew: pass\n", "verdict": {"verdict": "compile_error", "log_tail": "LOG"}}
FEEDBACK = {"category": "compile_error", "instruction": "Fix the include.", "error": "main.cpp:3: error: X",
            "note": "NOTE TEXT", "source": "rules"}
EXAMPLE = {"id": "ex", "title": "Vectorised ReLU", "techniques": ["float4"], "when_to_use": "memory-bound",
           "solution": "__global__ void relu_kernel() {}"}


def test_focused_feedback_shows_last_code_error_note_and_instruction_after_the_problem() -> None:
    inp = {"task": TASK, "round": 1, "sample": 0, "feedback": FEEDBACK, "last": LAST, "history": [LAST]}
    messages = generation_messages(inp, Context())
    user = messages[-1]["content"]
    assert len(messages) == 2
    positions = [user.index(s) for s in ("class Model: ...", "class ModelNew: pass", "main.cpp:3: error: X",
                                         "NOTE TEXT", "Fix the include.")]
    assert positions == sorted(positions)
    assert "LOG" not in user, "focused feedback never pastes the raw log"


def test_naive_feedback_replays_history_with_the_raw_log() -> None:
    inp = {"task": TASK, "round": 1, "sample": 0, "feedback": FEEDBACK, "last": LAST, "history": [LAST]}
    messages = generation_messages(inp, Context(feedback="naive"))
    assert messages[-2] == {"role": "assistant", "content": LAST["completion"]}
    assert messages[-1]["content"] == "The evaluator reported compile_error:\nLOG\nFix it."
    assert "Fix the include." not in messages[1]["content"]


def test_naive_history_keeps_the_newest_rounds_within_its_budget() -> None:
    rounds = [{**LAST, "completion": f"ROUND{r} " + "x" * 9000, "round": r} for r in range(6)]
    inp = {"task": TASK, "round": 6, "sample": 0, "history": rounds}
    replayed = [m["content"][:6] for m in generation_messages(inp, Context(feedback="naive"))
                if m["role"] == "assistant"]
    assert replayed == ["ROUND4", "ROUND5"]


def test_examples_carry_cuda_code_only_for_the_cuda_backend() -> None:
    plan = {"summary": "fuse", "ops": []}
    inp = {"task": TASK, "round": 0, "sample": 0, "examples": [EXAMPLE], "plan": plan}
    cuda = generation_messages(inp, Context(backend="cuda"))[-1]["content"]
    cpu = generation_messages(inp, Context(backend="cpu"))[-1]["content"]
    assert "relu_kernel" in cuda and "relu_kernel" not in cpu
    assert "Vectorised ReLU" in cpu and "## Plan\nfuse" in cpu
    assert cuda.endswith(EXAMPLES_DONE) and cpu.endswith(EXAMPLES_DONE)
    bare = generation_messages(inp | {"examples": []}, Context(backend="cuda"))[-1]["content"]
    assert EXAMPLES_DONE not in bare


def test_a_long_example_keeps_its_head_and_its_modelnew_cut_at_whole_lines() -> None:
    lines = ['cuda_source = """'] + [f"    acc += a[{i}] * b[{i}];" for i in range(400)]
    solution = "\n".join([*lines, '"""', "class ModelNew(nn.Module):", "    def forward(self, a, b): ..."])
    excerpt = solution_excerpt(solution, 3000)
    assert len(excerpt) <= 3000 + len(OMITTED) + 2
    head, tail = excerpt.split(f"\n{OMITTED}\n")
    assert head.startswith("cuda_source") and tail.endswith("def forward(self, a, b): ...")
    assert all(line in solution.splitlines() for line in head.splitlines() + tail.splitlines())
    assert solution_excerpt("short", 3000) == "short"


def test_seeds_differ_per_sample_and_round_and_follow_the_context_seed() -> None:
    seeds = {sample_seed(Context(seed=3), "T", r, s) for r in range(3) for s in range(4)}
    assert len(seeds) == 12 and sample_seed(Context(seed=3), "T", 0, 0) == 3
    assert sample_seed(Context(), "A", 0, 0) != sample_seed(Context(), "B", 0, 0)
