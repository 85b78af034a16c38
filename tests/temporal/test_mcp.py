"""An agent whose tools come from an MCP server, run on the Temporal dev server: the tool list is
the result of a ``tether.list_tools`` activity (in the history), each MCP call a ``tether.run_tool``
activity that starts the server, calls it with the run's idempotency key and stops it."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client

if importlib.util.find_spec("mcp") is None and os.environ.get("CI") != "true":
    pytest.skip("the mcp extra is not installed", allow_module_level=True)

from tether import Agent
from tether.mcp import IDEMPOTENCY_META_KEY, MCPServerStdio
from tether.models.scripted import tool_call
from tether.temporal import BlobStore, TetherClient
from tether.temporal.workflow import AgentWorkflow

from ..mcp_sources.fixtures import TOOLBOX, CallLog, alive
from .agents import LoggingModel, registry
from .fixtures import activity_starts, history_events, running_worker
from .replays import replay

SCRIPT: list[Any] = [
    tool_call("box_add", {"a": 20, "b": 22}),
    tool_call("box_stats", {"values": [1, 2]}, text="Now the stats."),
    "20 + 22 = 42.",
]


MODELS: list[LoggingModel] = []  # the models the in-process worker's activities built


@registry.register("mcp_toolbox")
def mcp_agent(config: dict[str, Any]) -> Agent:
    server = MCPServerStdio(
        sys.executable, [str(TOOLBOX), "--log", str(config["calls"])], prefix="box", exclude=["hang"], startup_timeout=30
    )
    model = LoggingModel(list(SCRIPT), config)
    model.record_requests = True
    MODELS.append(model)
    return Agent(model=model, tools=[server])


async def test_an_mcp_agent_runs_on_temporal_with_listing_and_calls_as_activities(
    client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path
) -> None:
    calls = CallLog(tmp_path / "calls.jsonl")
    config = {"log": str(tmp_path / "log"), "calls": str(calls.path)}
    tc = TetherClient(client, blobs, task_queue)
    async with running_worker(client, task_queue, blobs):
        result = await tc.execute("mcp_toolbox", "Add things.", run_id="mcp-temporal-1", config=config)
    assert str(result) == "20 + 22 = 42."
    assert calls.tools() == ["add", "stats"]  # each MCP tool called exactly once
    assert [entry["meta"][IDEMPOTENCY_META_KEY] for entry in calls.entries()] == [
        "mcp-temporal-1/tooluse_1_0",
        "mcp-temporal-1/tooluse_3_1",
    ]
    requests = [request for model in MODELS for request in model.calls]
    assert len(requests) == 3  # one model activity per call, each given the listed MCP tools
    for request in requests:
        names = [spec["name"] for spec in request["tool_specs"]]
        assert names == ["box_add", "box_echo", "box_stats", "box_pixel", "box_fail", "box_slow", "box_crash", "box_blob"]
    events = await history_events(client, "mcp-temporal-1")
    assert len(activity_starts(events, "tether.list_tools")) == 1
    (listed,) = [
        json.loads(event.activity_task_completed_event_attributes.result.payloads[0].data)
        for event in events
        if event.HasField("activity_task_completed_event_attributes")
        and b"source_tools" in event.activity_task_completed_event_attributes.result.payloads[0].data
    ]
    assert listed["source_tools"]["idempotent"] == ["box_add"]  # its idempotentHint, carried to every tool activity
    assert "box_echo" in listed["non_idempotent"] and "box_add" not in listed["non_idempotent"]
    assert len(activity_starts(events, "tether.run_tool")) == 2
    assert not any(alive(pid) for pid in calls.pids())  # every activity stopped the server it started
    # deterministic: the history replays against the workflow code without any server
    history = await client.get_workflow_handle("mcp-temporal-1").fetch_history()
    await replay([history], AgentWorkflow)
