"""``Idempotency-Key`` on a tool call's HTTP requests, seen by a real server on loopback."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from tether import Agent, ToolContext, tool
from tether.durable import SQLiteStore
from tether.effects import IDEMPOTENCY_HEADER, current_key, http_client, sync_http_client
from tether.errors import ConfigurationError
from tether.models import ScriptedModel
from tether.models.scripted import tool_call
from tether.types import ToolUse

from .conftest import Recorder

ROOT = Path(__file__).resolve().parents[2]


def test_context_http_sends_the_call_key_on_post_and_patch(recorder: Recorder, tmp_path: Path) -> None:
    clients: list[httpx.AsyncClient] = []

    @tool
    async def charge(amount: int, context: ToolContext) -> str:
        """Charge, then mark the receipt sent."""
        first = await context.http.post(f"{recorder.url}/charges", json={"amount": amount})
        await context.http.patch(f"{recorder.url}/charges/1", json={"receipt": True})
        await context.http.get(f"{recorder.url}/charges/1")
        clients.append(context.http)
        return str(first.json()["key"])

    model = ScriptedModel([tool_call("charge", {"amount": 5}, tool_use_id="c1"), "paid"])
    agent = Agent(model=model, tools=[charge], store=SQLiteStore(tmp_path / "runs.db"))
    agent("pay", run_id="r1")
    assert recorder.keys("POST") == ["r1/c1"]
    assert recorder.keys("PATCH") == ["r1/c1#2"]  # the call's second keyed request: a key of its own
    assert recorder.keys("GET") == [None]  # idempotent by HTTP's semantics: no key
    assert agent.messages[2]["content"][0]["toolResult"]["content"] == [{"text": "r1/c1"}]  # type: ignore[typeddict-item]
    assert clients[0].is_closed  # closed with the invocation


def test_one_client_serves_parallel_calls_each_with_its_own_key(recorder: Recorder) -> None:
    shared = http_client(base_url=recorder.url)  # made once, outside any call

    @tool
    async def notify(who: str, context: ToolContext) -> str:
        """Send a notification."""
        await asyncio.sleep(0)
        response = await shared.post("/notify", json={"who": who, "key": context.idempotency_key})
        return str(response.json()["key"])

    uses = {"role": "assistant", "content": [tool_call("notify", {"who": w}, tool_use_id=f"n-{w}")["content"][0] for w in "ab"]}
    agent = Agent(model=ScriptedModel([uses, "sent"]), tools=[notify])
    agent("notify both")  # not durable: the key is the tool-use id
    asyncio.run(shared.aclose())
    sent = {s.body["who"]: (s.headers["idempotency-key"], s.body["key"]) for s in recorder.seen}
    assert sent == {"a": ("n-a", "n-a"), "b": ("n-b", "n-b")}


def test_sync_tool_client_in_a_worker_thread(recorder: Recorder, tmp_path: Path) -> None:
    @tool
    def refund(amount: int) -> str:
        """Refund (a synchronous tool: it runs in a worker thread)."""
        with sync_http_client() as client:
            client.post(f"{recorder.url}/refunds", json={"amount": amount})
            client.delete(f"{recorder.url}/holds/1")
        return "refunded"

    model = ScriptedModel([tool_call("refund", {"amount": 2}, tool_use_id="x9"), "ok"])
    agent = Agent(model=model, tools=[refund], store=SQLiteStore(tmp_path / "runs.db"))
    agent("refund", run_id="r2")
    assert recorder.keys("POST") == ["r2/x9"] and recorder.keys("DELETE") == [None]


def test_outside_a_tool_call_no_key_and_own_headers_and_methods_are_kept(recorder: Recorder) -> None:
    async def requests() -> None:
        async with http_client() as client:
            assert current_key() is None
            await client.post(f"{recorder.url}/a")  # no tool call: nothing to send
        async with http_client(methods=("put",)) as client:
            with _in_call("k1"):
                await client.post(f"{recorder.url}/b")
                await client.put(f"{recorder.url}/c")
                await client.put(f"{recorder.url}/d", headers={IDEMPOTENCY_HEADER: "mine"})

    asyncio.run(requests())
    assert [(s.path, s.headers.get("idempotency-key")) for s in recorder.seen] == [("/a", None), ("/b", None), ("/c", "k1"), ("/d", "mine")]


def _in_call(key: str) -> Any:
    from tether.effects.http import keyed_call

    return keyed_call(key)


def test_httpx_missing_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "httpx", None)
    with pytest.raises(ConfigurationError, match=r"tether\[http\]"):
        http_client()
    with pytest.raises(ConfigurationError, match=r"tether\[http\]"):
        sync_http_client()


def test_context_http_needs_an_invocation() -> None:
    use: ToolUse = {"toolUseId": "t1", "name": "x", "input": {}}
    with pytest.raises(ConfigurationError, match=r"'t1'.*http_client"):
        _ = ToolContext(tool_use=use, agent=Agent()).http


def _worker(action: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, "-m", "tests.effects.http_worker", action, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def test_the_key_is_identical_when_an_in_doubt_call_runs_again_after_kill_9(recorder: Recorder, tmp_path: Path) -> None:
    db, marker = str(tmp_path / "runs.db"), str(tmp_path / "killed")
    killed = _worker("start", db, recorder.url, marker)
    assert killed.returncode == -signal.SIGKILL, killed.stderr  # died after its request, before its result was recorded
    assert len(recorder.seen) == 1
    resumed = _worker("resume", db, recorder.url, marker)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.strip() == "paid"
    first, again = recorder.seen
    assert first.headers["idempotency-key"] == again.headers["idempotency-key"] == "pay/c1"
    assert first.body == again.body == {"amount": 5, "key": "pay/c1"}
    stored = SQLiteStore(db).load("pay")
    assert stored is not None
    result = stored.messages[2]["content"][0]["toolResult"]  # type: ignore[typeddict-item]
    assert result["content"] == [{"text": "charged 5: pay/c1"}]
