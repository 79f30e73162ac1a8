"""Studio: `langgraph dev --no-browser` serves langgraph.json's four graphs offline, driven by langgraph_sdk.

The server runs a scripted model (`scripted_backend.child_env`; the real one takes minutes per graph on
2 cores) and deferred evaluation, so each run streams its node updates up to the evaluate interrupt and is
then resumed from the client with evaluator-shaped results, as Studio's resume button would.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from langgraph_sdk import get_sync_client
from scripted_backend import child_env

from evaluator.verdict import make
from nodes.context import STRATEGIES

REPO = Path(__file__).resolve().parents[3]
GRAPHS = [*STRATEGIES, *(f"{name}_program" for name in STRATEGIES)]  # both formats
TASK = {
    "name": "Row_Sum_Of_Squares",
    "level": 0,
    "problem_id": 2,
    "source": (REPO / "graph" / "demo_tasks" / "2_Row_Sum_Of_Squares.py").read_text(),
}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    port = _free_port()
    env = child_env(REPO, LANGSMITH_TRACING="false", LANGGRAPH_CLI_NO_ANALYTICS="1")
    langgraph = Path(sys.executable).with_name("langgraph")
    log = (
        open(REPO / ".pytest_cache" / f"langgraph-dev-{port}.log", "w")
        if (REPO / ".pytest_cache").is_dir()
        else subprocess.DEVNULL
    )
    proc = subprocess.Popen(
        [str(langgraph), "dev", "--no-browser", "--no-reload", "--port", str(port)],
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(url + "/ok", timeout=2) as reply:
                    if json.loads(reply.read()).get("ok"):
                        break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("langgraph dev did not come up")
                time.sleep(0.5)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


def test_langgraph_json_lists_every_strategy_in_both_formats() -> None:
    config = json.loads((REPO / "langgraph.json").read_text())
    assert sorted(config["graphs"]) == sorted(GRAPHS)


def test_context_schema_shows_ambition_and_prompt_fields(server: str) -> None:
    client = get_sync_client(url=server)
    for graph_id in GRAPHS:
        (assistant,) = client.assistants.search(graph_id=graph_id)
        schema = client.assistants.get_schemas(assistant["assistant_id"])["context_schema"]["properties"]
        assert schema["ambition"]["enum"] == ["conservative", "moderate", "aggressive", "autotune"]
        assert schema["prompts"]["type"] == "object" and schema["prompts"]["description"]
        assert {"samples", "rounds", "evaluator", "backend"} <= set(schema)


def test_the_input_form_shows_only_the_task(server: str) -> None:
    client = get_sync_client(url=server)
    for graph_id in GRAPHS:
        (assistant,) = client.assistants.search(graph_id=graph_id)
        schema = client.assistants.get_schemas(assistant["assistant_id"])["input_schema"]
        assert list(schema["properties"]) == ["task"], graph_id


@pytest.mark.parametrize("graph_id", GRAPHS)
def test_a_run_streams_node_updates_pauses_resumes_and_keeps_history(server: str, graph_id: str) -> None:
    client = get_sync_client(url=server)
    thread = client.threads.create()["thread_id"]
    context = {
        "evaluator": "deferred",
        "backend": "cpu",
        "rounds": 1,
        "samples": 2,
        "retrieval_k": 0,
        "ambition": "conservative",
    }
    nodes = []
    for part in client.runs.stream(
        thread, graph_id, input={"task": TASK}, context=context, stream_mode="updates"
    ):
        if part.event == "updates":
            nodes.extend(part.data)
    assert nodes.count("generate") == 2 and nodes[-1] == "__interrupt__"  # Send fan-out: two samples
    state = client.threads.get_state(thread)
    (paused,) = state["interrupts"]
    jobs = paused["value"]["jobs"]
    error = 'error: identifier "blockIdx" is undefined'
    verdicts = [{"job_id": job["job_id"], **make("compile_error", log_tail=error)} for job in jobs]
    resumed = [
        part.data
        for part in client.runs.stream(
            thread, graph_id, command={"resume": verdicts}, context=context, stream_mode="updates"
        )
        if part.event == "updates"
    ]
    assert "evaluate" in [node for update in resumed for node in update]
    final = client.threads.get_state(thread)
    assert not final["next"] and final["values"]["best"]["verdict"]["verdict"] == "compile_error"
    history = client.threads.get_history(thread, limit=100)
    assert len(history) >= 4 and ["evaluate"] in [h["next"] for h in history]  # the pause is in the history
    assert history[0]["values"]["best"] and not history[-1]["values"].get("best")
