"""Strands TypeScript snapshots: the real ``@strands-agents/sdk`` (pinned in
``tests/snapshot/node/package-lock.json``, installed by ``scripts/test``) under node, Tether, and a
real Strands Python agent read each other's documents.

- node writes -> Tether loads into a native agent, continues a turn, writes TypeScript -> node
  loads it and continues (its model sees the whole conversation);
- node writes -> Tether -> a real ``strands.Agent`` continues a turn -> Tether -> node continues;
- a TypeScript document becomes a durable SQLite run, which another agent continues and node after it;
- a TypeScript run stopped for an interrupt goes through Tether and is answered in TypeScript;
- the committed golden documents (written by the SDK, see :func:`write_golden`) load without
  node, and the SDK still writes them;
- bad input: an unknown ``schemaVersion``, a truncated or a foreign document is a
  ``SnapshotError`` naming the field; an agent that refuses one is unchanged, and so is every
  row of its store.

The node side is ``tests/snapshot/node/strands_agent.mjs``: a TypeScript agent with a scripted
model (no network) and two tools, ``add`` and ``approve`` (which asks a human first).
Regenerate the golden documents with ``python tests/snapshot/test_typescript.py``.
"""

from __future__ import annotations

import copy
import json
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from strands import Agent as StrandsAgent
from strands.models.model import Model as StrandsModel
from strands.types._snapshot import Snapshot as StrandsSnapshot

from tether import Agent, ScriptedModel, Snapshot, SnapshotError, ToolContext, tool
from tether.durable import SQLiteStore
from tether.models.scripted import tool_call
from tether.snapshot import TS_SNAPSHOT_SCHEMA_VERSION, from_typescript, is_typescript, to_typescript

HERE = Path(__file__).parent
NODE_DIR = HERE / "node"
SCRIPT = NODE_DIR / "strands_agent.mjs"
SDK_VERSION = "1.19.0"
GOLDEN_SESSION = HERE / "fixtures" / f"strands-ts-{SDK_VERSION}-session.json"
GOLDEN_INTERRUPTED = HERE / "fixtures" / f"strands-ts-{SDK_VERSION}-interrupted.json"

PNG = "iVBORw0KGgo="
NOTE = "aGVsbG8gd29ybGQ="
SECRET = "c2VjcmV0"
SESSION_REQUEST: dict[str, Any] = {
    "systemPrompt": [{"text": "You add numbers."}, {"cachePoint": {"cacheType": "default"}}],
    "state": {"user": {"name": "ada", "visits": 2}},
    "modelState": {"responseId": "resp_7"},
    "messages": [
        {
            "role": "user",
            "content": [
                {"text": "Here is a picture and a note."},
                {"image": {"format": "png", "source": {"bytes": PNG}}},
                {"document": {"name": "note", "format": "txt", "source": {"bytes": NOTE}}},
            ],
            "trackingId": "11111111-1111-4111-8111-111111111111",
        },
        {
            "role": "assistant",
            "content": [
                {"reasoning": {"text": "A picture of nothing.", "signature": "sig-1"}},
                {"reasoning": {"redactedContent": SECRET}},
                {"text": "Noted."},
            ],
            "trackingId": "22222222-2222-4222-8222-222222222222",
            "metadata": {"usage": {"inputTokens": 12, "outputTokens": 3, "totalTokens": 15}},
        },
    ],
    "prompt": "What is 2+3?",
    "responses": [{"toolUse": {"name": "add", "toolUseId": "tooluse_1", "input": {"a": 2, "b": 3}}}, {"text": "2+3 is 5."}],
    "appData": {"ticket": "T-1"},
}
INTERRUPTED_REQUEST: dict[str, Any] = {
    "prompt": "Pay 5",
    "responses": [{"toolUse": {"name": "approve", "toolUseId": "tooluse_9", "input": {"amount": 5}}}],
}
APPROVAL_ID = "tool:tooluse_9:approval"  # the TypeScript SDK's id: source, tool-use id, name


def run_node(request: dict[str, Any]) -> dict[str, Any]:
    """One turn of a real TypeScript agent (see ``strands_agent.mjs``); its JSON reply."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed: the TypeScript snapshot tests run the real @strands-agents/sdk under node")
    if not (NODE_DIR / "node_modules" / "@strands-agents" / "sdk" / "package.json").is_file():
        pytest.fail(f"@strands-agents/sdk is not installed in {NODE_DIR}: run scripts/test (npm ci --no-audit --no-fund there)")
    done = subprocess.run([node, str(SCRIPT)], input=json.dumps(request), capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, f"node failed ({done.returncode}):\n{done.stderr}"
    reply: dict[str, Any] = json.loads(done.stdout)
    return reply


def normalized(document: dict[str, Any]) -> dict[str, Any]:
    """A TypeScript document without what differs from run to run (timestamp, minted ids)."""
    out = copy.deepcopy(document)
    out["createdAt"] = "<time>"
    for message in out["data"].get("messages", []):
        if "trackingId" in message and not message["trackingId"].startswith(("1111", "2222")):
            message["trackingId"] = "<minted>"
    pending = (out["data"].get("interrupts") or {}).get("pendingToolExecution")
    if pending is not None:
        pending["assistantMessageData"]["trackingId"] = "<minted>"
    return out


def golden(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def write_golden() -> None:
    """Write the golden documents with the installed SDK (run this file as a script)."""
    GOLDEN_SESSION.parent.mkdir(exist_ok=True)
    for path, request in ((GOLDEN_SESSION, SESSION_REQUEST), (GOLDEN_INTERRUPTED, INTERRUPTED_REQUEST)):
        path.write_text(json.dumps(run_node(request)["snapshot"], indent=2) + "\n", encoding="utf-8")


@tool(run_in_thread=False)
def add(a: int, b: int) -> dict[str, int]:
    """Add two numbers.

    Args:
        a: One.
        b: Other.
    """
    return {"sum": a + b}


class StrandsScriptedModel(StrandsModel):
    """A Strands Python model that answers each call with the next scripted text (no network)."""

    def __init__(self, texts: list[str]) -> None:
        self.texts = list(texts)
        self.seen: list[list[dict[str, Any]]] = []

    def update_config(self, **model_config: Any) -> None:
        pass

    def get_config(self) -> Any:
        return {}

    async def structured_output(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise AssertionError("no structured output is expected")
        yield  # pragma: no cover

    async def stream(self, messages: Any, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        self.seen.append(copy.deepcopy(list(messages)))
        text = self.texts.pop(0)
        yield {"messageStart": {"role": "assistant"}}
        yield {"contentBlockDelta": {"delta": {"text": text}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "end_turn"}}


def _untracked(message: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in message.items() if key != "trackingId"}


def ts_shaped(messages: list[dict[str, Any]]) -> None:
    """Assert ``messages`` are TypeScript's own: camelCase message keys, TypeScript block kinds."""
    for message in messages:
        assert set(message) <= {"role", "content", "trackingId", "metadata"}, message
        for block in message["content"]:
            assert set(block) <= {"text", "toolUse", "toolResult", "reasoning", "cachePoint", "image", "document"}, block


def tether_shaped(messages: list[dict[str, Any]]) -> None:
    """Assert ``messages`` are Tether's (and Strands Python's): ``tracking_id``, Python block kinds."""
    for message in messages:
        assert set(message) <= {"role", "content", "tracking_id", "metadata"}, message
        for block in message["content"]:
            assert set(block) <= {"text", "toolUse", "toolResult", "reasoningContent", "cachePoint", "image", "document"}, block


# -- the golden documents (no node) -----------------------------------------------------------


def test_the_golden_typescript_snapshot_loads_into_tether_field_by_field() -> None:
    document = golden(GOLDEN_SESSION)
    assert is_typescript(document) and document["schemaVersion"] == TS_SNAPSHOT_SCHEMA_VERSION
    snapshot = Snapshot.from_json(GOLDEN_SESSION.read_text(encoding="utf-8"))
    wire = snapshot.to_dict()
    assert wire["schema_version"] == "1.0" and wire["scope"] == "agent"
    assert wire["created_at"] == document["createdAt"] and wire["app_data"] == {"ticket": "T-1"}
    data = wire["data"]
    assert sorted(data) == ["interrupt_state", "messages", "model_state", "state", "system_prompt"]
    assert data["state"] == {"user": {"name": "ada", "visits": 2}}
    assert data["model_state"] == {"responseId": "resp_7"}
    assert data["system_prompt"] == [{"text": "You add numbers."}, {"cachePoint": {"type": "default"}}]
    assert data["interrupt_state"] == {"interrupts": {}, "context": {}, "activated": False}
    messages = data["messages"]
    tether_shaped(messages)
    assert [m["tracking_id"] for m in messages] == [m["trackingId"] for m in document["data"]["messages"]]
    assert messages[0]["content"][1] == {"image": {"format": "png", "source": {"bytes": {"$b64": PNG}}}}
    assert messages[0]["content"][2] == {"document": {"name": "note", "format": "txt", "source": {"bytes": {"$b64": NOTE}}}}
    assert messages[1]["content"][:2] == [
        {"reasoningContent": {"reasoningText": {"text": "A picture of nothing.", "signature": "sig-1"}}},
        {"reasoningContent": {"redactedContent": {"$b64": SECRET}}},
    ]
    assert messages[1]["metadata"] == {"usage": {"inputTokens": 12, "outputTokens": 3, "totalTokens": 15}}
    assert messages[3]["content"] == [{"toolUse": {"name": "add", "toolUseId": "tooluse_1", "input": {"a": 2, "b": 3}}}]
    assert messages[4]["content"] == [{"toolResult": {"toolUseId": "tooluse_1", "status": "success", "content": [{"json": {"sum": 5}}]}}]
    # ... and back: the TypeScript document Tether writes is the one it read.
    assert snapshot.to_typescript() == document
    assert to_typescript(from_typescript(document)) == document


def test_a_native_agent_continues_the_golden_conversation_with_its_bytes() -> None:
    model = ScriptedModel(["7."])
    model.record_requests = True
    agent = Agent(model=model, tools=[add])
    agent.load_snapshot(golden(GOLDEN_SESSION))
    assert agent.state.get() == {"user": {"name": "ada", "visits": 2}}
    assert agent.run_state.model_state == {"responseId": "resp_7"}
    assert agent.messages[0]["content"][1]["image"]["source"]["bytes"] == b"\x89PNG\r\n\x1a\n"
    assert agent.messages[1]["content"][1]["reasoningContent"]["redactedContent"] == b"secret"
    assert agent("And 3+4?").text == "7."
    seen = model.calls[0]["messages"]
    assert len(seen) == 7 and seen[:6] == agent.messages[:6]


def test_the_golden_interrupted_typescript_snapshot_keeps_what_only_typescript_has() -> None:
    document = golden(GOLDEN_INTERRUPTED)
    wire = Snapshot.from_dict(document).to_dict()
    state = wire["data"]["interrupt_state"]
    assert state["activated"] is True
    assert state["interrupts"] == {APPROVAL_ID: {"id": APPROVAL_ID, "name": "approval", "reason": {"amount": 5}, "response": None}}
    assert state["tether_interrupts"] == {APPROVAL_ID: {"source": "tool"}}
    assert state["typescript"] == {"pendingToolExecution": document["data"]["interrupts"]["pendingToolExecution"]}
    assert Snapshot.from_dict(wire).to_typescript() == document


# -- the real SDK under node ------------------------------------------------------------------


def test_the_sdk_still_writes_the_golden_documents() -> None:
    assert normalized(run_node(SESSION_REQUEST)["snapshot"]) == normalized(golden(GOLDEN_SESSION))
    assert normalized(run_node(INTERRUPTED_REQUEST)["snapshot"]) == normalized(golden(GOLDEN_INTERRUPTED))


def test_node_writes_tether_continues_and_writes_node_loads_and_continues() -> None:
    first = run_node(SESSION_REQUEST)
    assert first["text"] == "2+3 is 5." and first["stopReason"] == "endTurn"
    ts_document = first["snapshot"]
    assert set(ts_document) == {"scope", "schemaVersion", "createdAt", "data", "appData"}
    assert set(ts_document["data"]) == {"messages", "state", "systemPrompt", "modelState", "interrupts"}

    # Tether loads TypeScript's own document and continues with a tool call of its own.
    model = ScriptedModel([tool_call("add", {"a": 3, "b": 4}, tool_use_id="tether_1"), "3+4 is 7."])
    model.record_requests = True
    agent = Agent(model=model, tools=[add])
    agent.load_snapshot(json.loads(json.dumps(ts_document)))
    result = agent("And 3+4?")
    assert result.text == "3+4 is 7."
    assert model.calls[0]["messages"][:6] == agent.messages[:6]
    assert [m["tracking_id"] for m in agent.messages[:6]] == [m["trackingId"] for m in ts_document["data"]["messages"]]
    assert agent.messages[0]["content"][1]["image"]["source"]["bytes"] == b"\x89PNG\r\n\x1a\n"
    assert [block for m in agent.messages[6:] for block in m["content"]][1:] == [
        {"toolUse": {"toolUseId": "tether_1", "name": "add", "input": {"a": 3, "b": 4}}},
        {"toolResult": {"toolUseId": "tether_1", "status": "success", "content": [{"json": {"sum": 7}}]}},
        {"text": "3+4 is 7."},
    ]

    # Tether writes TypeScript's shape, not its own.
    back = agent.take_snapshot(preset="all", app_data={"ticket": "T-2"}).to_typescript()
    assert back["schemaVersion"] == "1.0" and back["scope"] == "agent" and back["appData"] == {"ticket": "T-2"}
    assert set(back["data"]) == {"messages", "state", "systemPrompt", "modelState", "interrupts", "conversation_manager_state"}
    ts_shaped(back["data"]["messages"])
    assert back["data"]["messages"][:6] == ts_document["data"]["messages"]  # tracking ids and bytes as TypeScript wrote them
    assert back["data"]["systemPrompt"] == ts_document["data"]["systemPrompt"]
    assert back["data"]["interrupts"] == {"interrupts": {}, "activated": False}

    # TypeScript loads Tether's document and continues: its model sees the whole conversation.
    last = run_node({"snapshot": back, "prompt": "Thanks!", "responses": [{"text": "You are welcome."}]})
    assert last["text"] == "You are welcome."
    seen = last["modelCalls"][0]
    # Tether's own messages have no tracking id: TypeScript mints one when it loads them.
    assert seen[:6] == back["data"]["messages"][:6]
    assert [_untracked(m) for m in seen[6:10]] == back["data"]["messages"][6:10]
    assert all(isinstance(m["trackingId"], str) for m in seen)
    assert seen[10]["content"] == [{"text": "Thanks!"}]
    assert last["snapshot"]["data"]["state"] == {"user": {"name": "ada", "visits": 2}}
    assert last["snapshot"]["data"]["modelState"] == {"responseId": "resp_7"}
    assert last["snapshot"]["data"]["systemPrompt"] == ts_document["data"]["systemPrompt"]
    assert len(last["messages"]) == 12 and last["messages"][:10] == seen[:10]


def test_node_writes_a_strands_python_agent_continues_through_tether_and_node_continues() -> None:
    ts_document = run_node(SESSION_REQUEST)["snapshot"]
    wire = Snapshot.from_dict(ts_document).to_dict()
    # Strands Python reads Tether's conversion of TypeScript's document with its own API.
    model = StrandsScriptedModel(["3+4 is 7."])
    python_agent = StrandsAgent(model=model, callback_handler=None)
    python_agent.load_snapshot(StrandsSnapshot.from_dict(wire))
    assert python_agent.state.get() == {"user": {"name": "ada", "visits": 2}}
    assert python_agent.system_prompt == "You add numbers."
    assert [m.get("tracking_id") for m in python_agent.messages] == [m["trackingId"] for m in ts_document["data"]["messages"]]
    python_agent("And 3+4?")
    assert model.seen[0][-1]["content"] == [{"text": "And 3+4?"}]
    assert [m["content"] for m in model.seen[0][:6]] == [m["content"] for m in wire["data"]["messages"]]

    # ... and writes a snapshot that reaches TypeScript through Tether.
    python_wire = python_agent.take_snapshot(preset="session", include=["system_prompt"]).to_dict()
    back = Snapshot.from_dict(json.loads(json.dumps(python_wire))).to_typescript()
    ts_shaped(back["data"]["messages"])
    assert back["data"]["messages"][:6] == ts_document["data"]["messages"]
    assert [b for m in back["data"]["messages"][6:] for b in m["content"]] == [{"text": "And 3+4?"}, {"text": "3+4 is 7."}]
    last = run_node({"snapshot": back, "prompt": "Thanks!", "responses": [{"text": "You are welcome."}]})
    assert last["text"] == "You are welcome."
    assert all(isinstance(m["trackingId"], str) for m in back["data"]["messages"])  # Strands Python mints them too
    assert last["modelCalls"][0][:8] == back["data"]["messages"]
    assert last["snapshot"]["data"]["state"] == {"user": {"name": "ada", "visits": 2}}


def test_a_typescript_snapshot_becomes_a_durable_run_that_typescript_continues(tmp_path: Path) -> None:
    document = golden(GOLDEN_SESSION)
    store = SQLiteStore(tmp_path / "runs.db")
    agent = Agent(model=ScriptedModel(["7."]), store=store)
    agent.load_snapshot(document)
    assert agent("And 3+4?", run_id="from-ts").text == "7."
    stored = store.load("from-ts")
    assert stored is not None and len(stored.messages) == 8
    assert [m.get("tracking_id") for m in stored.messages[:6]] == [m["trackingId"] for m in document["data"]["messages"]]
    assert stored.head["state"] == {"user": {"name": "ada", "visits": 2}}
    # Another process's agent continues the stored run, and TypeScript continues after it.
    later = Agent(model=ScriptedModel(["9."]), store=SQLiteStore(tmp_path / "runs.db"))
    assert later("And 4+5?", run_id="from-ts").text == "9."
    back = later.take_snapshot(preset="session").to_typescript()
    assert back["data"]["messages"][:6] == document["data"]["messages"]
    assert len(back["data"]["messages"]) == 10
    last = run_node({"snapshot": back, "prompt": "Thanks!", "responses": [{"text": "You are welcome."}]})
    assert [_untracked(m) for m in last["modelCalls"][0][:10]] == [_untracked(m) for m in back["data"]["messages"]]
    assert last["text"] == "You are welcome."


def test_a_typescript_interrupt_goes_through_tether_and_is_answered_in_typescript() -> None:
    stopped = run_node(INTERRUPTED_REQUEST)
    assert stopped["stopReason"] == "interrupt" and [i["id"] for i in stopped["interrupts"]] == [APPROVAL_ID]
    through = Snapshot.from_json(json.dumps(stopped["snapshot"])).to_typescript()
    assert through == stopped["snapshot"]
    answered = run_node(
        {
            "snapshot": through,
            "prompt": [{"interruptResponse": {"interruptId": APPROVAL_ID, "response": "yes"}}],
            "responses": [{"text": "Paid 5."}],
        }
    )
    assert answered["approvals"] == ["yes"] and answered["text"] == "Paid 5." and answered["stopReason"] == "endTurn"
    assert answered["messages"][-2]["content"] == [
        {"toolResult": {"toolUseId": "tooluse_9", "status": "success", "content": [{"json": {"approved": True, "amount": 5}}]}}
    ]
    assert answered["snapshot"]["data"]["interrupts"] == {"interrupts": {}, "activated": False}


# -- bad input --------------------------------------------------------------------------------


def _changed(change: Any) -> dict[str, Any]:
    document = golden(GOLDEN_SESSION)
    change(document)
    return document


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (lambda d: d.update(schemaVersion="2.0"), r"snapshot\.schemaVersion: '2\.0' is not a TypeScript snapshot schema version"),
        (lambda d: d.update(schemaVersion=1), r"snapshot\.schemaVersion: 1 is not a TypeScript snapshot schema version"),
        (lambda d: d.pop("schemaVersion"), r"snapshot\.schemaVersion: is missing"),
        (lambda d: d.pop("data"), r"snapshot\.data: is missing"),
        (lambda d: d.update(scope="multiAgent"), r"snapshot\.scope: must be 'agent'"),
        (lambda d: d.update(appData=[]), r"snapshot\.appData: must be an object"),
        (lambda d: d["data"].update(conversationManager={}), r"snapshot\.data\.conversationManager: is not a TypeScript snapshot field"),
        (lambda d: d["data"]["messages"][2].pop("content"), r"snapshot\.data\.messages\[2\]\.content: must be a list"),
        (lambda d: d["data"]["messages"][2].update(role="system"), r"snapshot\.data\.messages\[2\]\.role: must be 'user' or 'assistant'"),
        (
            lambda d: d["data"]["messages"][0]["content"].append({"video": {"format": "mp4", "source": {"bytes": PNG}}}),
            r"snapshot\.data\.messages\[0\]\.content\[3\]\.video: video blocks cannot be held in a Tether message",
        ),
        (
            lambda d: d["data"]["messages"][0]["content"][1]["image"].update(source={"url": "https://example.com/a.png"}),
            r"snapshot\.data\.messages\[0\]\.content\[1\]\.image\.source: must hold bytes",
        ),
        (
            lambda d: d["data"]["messages"][0]["content"][1]["image"]["source"].update(bytes="%%"),
            r"content\[1\]\.image\.source\.bytes: invalid base64",
        ),
        (lambda d: d["data"]["interrupts"].update(activated="yes"), r"snapshot\.data\.interrupts\.activated: must be true or false"),
        (lambda d: d.update(createdAt="yesterday"), r"snapshot\.createdAt: must be an ISO-8601 timestamp"),
    ],
)
def test_a_bad_typescript_document_is_a_snapshot_error_naming_the_field(change: Any, match: str) -> None:
    bad = _changed(change)
    with pytest.raises(SnapshotError, match=match):
        Snapshot.from_dict(bad)
    agent = Agent(messages=[{"role": "user", "content": [{"text": "keep me"}]}], state={"k": 1})
    before = copy.deepcopy((agent.messages, agent.state.get(), agent.run_state.interrupt_state))
    with pytest.raises(SnapshotError, match=match):
        agent.load_snapshot(bad)
    assert (agent.messages, agent.state.get(), agent.run_state.interrupt_state) == before, "nothing was applied"


def test_a_refused_typescript_document_changes_no_stored_row(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    agent = Agent(model=ScriptedModel(["7.", "9."]), store=SQLiteStore(db))
    agent.load_snapshot(golden(GOLDEN_SESSION))
    agent("And 3+4?", run_id="from-ts")

    def rows() -> dict[str, list[Any]]:
        with closing(sqlite3.connect(db)) as conn:
            tables = [name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
            return {table: conn.execute(f'SELECT * FROM "{table}"').fetchall() for table in tables}

    before = rows()
    assert any(before.values())
    bad_version = _changed(lambda d: d.update(schemaVersion="2.0"))
    truncated = _changed(lambda d: d["data"]["messages"][0].pop("content"))
    for target in (agent, Agent(model=ScriptedModel([]), store=SQLiteStore(db))):
        with pytest.raises(SnapshotError, match=r"snapshot\.schemaVersion"):
            target.load_snapshot(bad_version)
        with pytest.raises(SnapshotError, match=r"snapshot\.data\.messages\[0\]\.content"):
            target.load_snapshot(truncated)
    assert rows() == before
    assert agent("And 4+5?", run_id="from-ts").text == "9."  # the run goes on from what it had
    assert len(agent.messages) == 10


def test_a_truncated_typescript_snapshot_file_is_a_snapshot_error() -> None:
    text = GOLDEN_SESSION.read_text(encoding="utf-8")
    with pytest.raises(SnapshotError, match=r"snapshot is not valid JSON"):
        Snapshot.from_json(text[: len(text) // 2])


@pytest.mark.parametrize(
    ("document", "match"),
    [
        ({"thread_id": "t-1", "messages": []}, r"snapshot\.schema_version must be a version string"),
        (
            {"schemaVersion": "1.0", "scope": "agent", "createdAt": "2026-01-01T00:00:00Z", "data": {}, "thread": 1},
            r"snapshot\.thread: is not a key of a TypeScript snapshot",
        ),
        ([{"role": "user"}], r"snapshot must be an object"),
    ],
)
def test_a_foreign_document_is_a_snapshot_error_naming_the_field(document: Any, match: str) -> None:
    with pytest.raises(SnapshotError, match=match):
        Snapshot.from_dict(document)


def test_a_tether_run_stopped_for_its_own_interrupt_is_not_written_as_typescript() -> None:
    @tool(run_in_thread=False)
    def approve(amount: int, context: ToolContext) -> str:
        """Ask first.

        Args:
            amount: How much.
        """
        return str(context.interrupt("approval", {"amount": amount}))

    agent = Agent(model=ScriptedModel([tool_call("approve", {"amount": 5}, tool_use_id="t9")]), tools=[approve])
    assert agent("pay").stop_reason == "interrupt"
    with pytest.raises(SnapshotError, match=r"snapshot\.data\.interrupt_state\.activated: the run is stopped for interrupts raised by"):
        agent.take_snapshot(preset="session").to_typescript()


def test_to_typescript_takes_only_a_current_snapshot_dict() -> None:
    legacy = {"schema_version": 1, "scope": "agent", "created_at": "2026-01-01T00:00:00Z", "data": {"messages": []}}
    with pytest.raises(SnapshotError, match=r"snapshot\.schema_version: must be '1\.0', got 1; read it with Snapshot\.from_dict"):
        to_typescript(legacy)
    assert to_typescript(Snapshot.from_dict(legacy).to_dict())["data"] == {"messages": []}


def test_a_multi_agent_snapshot_is_not_written_as_typescript() -> None:
    snapshot = Snapshot({"orchestrator_id": "g", "state": {}}, scope="multiAgent")
    with pytest.raises(SnapshotError, match=r"snapshot\.scope: must be 'agent'"):
        snapshot.to_typescript()


if __name__ == "__main__":
    sys.exit(write_golden())
