"""The greedy region jobs of the shared problems as hashes: what a refactor must leave byte-identical.

For each shared KernelBench problem and each ambition, the zero_shot graph runs in region mode with deferred
evaluation and a scripted model that answers every region prompt with the body the embedded model wrote
greedily for that region (benchmarks/results/regions/samples.jsonl, where one exists) or a fixed line. The
graph stops at its evaluate interrupt; the record keeps sha256 of every prompt the model read (the
contract texts), of each candidate program (the assembled source) and of each job line. The CPU emulation
is off: the fixed line computes wrong values, and the record is of bytes, not of repairs.

    python tests/regions/golden_jobs.py --write   # rewrite tests/regions/golden_jobs.json (only on purpose)
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
KERNELBENCH = REPO.parent / "shared" / "kernelbench"
SAMPLES = REPO / "benchmarks" / "results" / "regions" / "samples.jsonl"
GOLDEN = Path(__file__).with_name("golden_jobs.json")
AMBITIONS = ("conservative", "moderate", "aggressive")
FALLBACK_BODY = "        result = 0.0f;"


def _sha(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def greedy_bodies() -> dict[tuple[int, int], tuple[str, str]]:
    """(level, problem id) -> (region id, the embedded model's greedy body for it)."""
    out = {}
    for line in SAMPLES.read_text().splitlines():
        row = json.loads(line)
        if row.get("sample") == 0 and row.get("body"):
            out[(row["level"], row["id"])] = (row["region"], row["body"])
    return out


def records(kernelbench: Path = KERNELBENCH) -> dict[str, dict[str, Any]]:
    """Problem key + ambition -> the hashes of what the graph sent (or the reason region mode was refused)."""
    from langgraph.checkpoint.memory import InMemorySaver

    sys.path.insert(0, str(REPO / "tests" / "graph"))
    from graph_fakes import ScriptedModel

    from evaluator.problem import load_problems, problem_to_dict
    from graph import compile_graph
    from nodes.context import Context
    from nodes.model.llm import use_model

    bodies = greedy_bodies()
    out: dict[str, dict[str, Any]] = {}
    graph = compile_graph("zero_shot", checkpointer=InMemorySaver())
    for problem in load_problems(kernelbench):
        task = problem_to_dict(problem)
        region, body = bodies.get((problem.level, problem.problem_id), ("", FALLBACK_BODY))

        def reply(messages: list[dict[str, str]], kwargs: dict[str, Any], region=region, body=body) -> str:
            text = messages[-1]["content"]
            return body if region and f"region_{region}(" in text else FALLBACK_BODY

        for ambition in AMBITIONS:
            model = ScriptedModel(reply)
            # the bytes sent, not the repairs: the emulation would send the fixed line back for repair
            ctx = Context(ambition=ambition, evaluator="deferred", samples=1, temperature=0.0, emulate=False)
            config = {"configurable": {"thread_id": f"{problem.key}/{ambition}"}}
            with use_model(model):
                state = graph.invoke({"task": task}, config=config, context=ctx)
            jobs = state["__interrupt__"][0].value["jobs"]
            pending = [c for c in graph.get_state(config).values.get("pending") or []]
            out[f"{problem.key}/{ambition}"] = {
                "format": [c.get("format", "program") for c in pending],
                "contracts": _sha([m for m, _ in model.calls]),
                "calls": len(model.calls),
                "sources": [_sha(c.get("code") or "") for c in pending],
                "jobs": [_sha(j) for j in jobs],
            }
    return out


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit(__doc__)
    sys.path.insert(0, str(REPO))
    GOLDEN.write_text(json.dumps(records(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN}")
