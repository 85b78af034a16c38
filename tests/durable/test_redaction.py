"""Redacted state keys never reach any store (raw bytes scanned), are absent after a resume
in a fresh agent, and come back through the policy's ``restore`` callback when it has one."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tether import Agent, tool
from tether.durable import RunStore
from tether.durable.crypto import AESGCMCipher
from tether.durable.redaction import RedactionPolicy
from tether.errors import ConfigurationError, StoreError
from tether.models import ScriptedModel
from tether.models.scripted import tool_call
from tether.tools.context import ToolContext

from .backends import Backend, backend
from .helpers import Crash

__all__ = ["backend"]


def agent(store: RunStore, seen: list[Any], secret: str | None, crash_on: int | None = None) -> Agent:
    """An agent whose ``call_api`` tool records the token it finds in the agent state."""

    @tool
    def call_api(n: int, ctx: ToolContext) -> str:
        """Call an API that needs the token."""
        seen.append(ctx.agent.state.get("api_token"))
        return f"called {n}"

    def crash(request: Any) -> Any:
        raise Crash("killed")

    script: list[Any] = [tool_call("call_api", {"n": 1}), tool_call("call_api", {"n": 2}), "done"]
    if crash_on is not None:
        script[crash_on] = crash
    state = {"user": "bob"} if secret is None else {"user": "bob", "api_token": secret}
    return Agent(model=ScriptedModel(script, stateful=True), tools=[call_api], state=state, store=store)


def test_redacted_key_never_reaches_the_store(backend: Backend) -> None:
    secret = f"tok-{uuid.uuid4().hex}"
    seen: list[Any] = []
    first = agent(backend.make(redact_state_keys={"api_token"}), seen, secret)
    assert str(first("go", run_id="r")) == "done"
    assert first.state.get("api_token") == secret  # the live agent keeps it; only the store lacks it
    assert seen == [secret, secret]
    raw = backend.raw_bytes()
    assert secret.encode() not in raw and b"bob" in raw  # the other state keys are stored
    agent(backend.make(), [], secret)("go", run_id="control")  # control: without redaction it is stored
    assert secret.encode() in backend.raw_bytes()


def test_resumed_run_lacks_the_key_until_the_application_sets_it(backend: Backend) -> None:
    secret = f"tok-{uuid.uuid4().hex}"
    seen: list[Any] = []
    with pytest.raises(Crash):
        agent(backend.make(redact_state_keys={"api_token"}), seen, secret, crash_on=1)("go", run_id="r")
    resumed = agent(backend.make(redact_state_keys={"api_token"}), seen, None)
    loaded = resumed.store.load("r")  # type: ignore[union-attr]
    assert loaded is not None and loaded.head["state"] == {"user": "bob"}
    result = resumed.resume("r")
    assert str(result) == "done"
    assert seen == [secret, None]  # after the resume the tool ran without the token
    assert resumed.state.get("user") == "bob" and "api_token" not in resumed.state
    resumed.state.set("api_token", "set again")  # what the application does after a resume
    assert resumed.state.get("api_token") == "set again"


def test_restore_callback_supplies_the_key_on_load(backend: Backend) -> None:
    secret = f"tok-{uuid.uuid4().hex}"
    calls: list[str] = []

    def restore(run_id: str) -> dict[str, Any]:
        calls.append(run_id)
        return {"api_token": f"fresh-{run_id}", "user": "mallory"}  # keys outside the policy are ignored

    policy = RedactionPolicy(frozenset({"api_token"}), restore=restore)
    seen: list[Any] = []
    with pytest.raises(Crash):
        agent(backend.make(redact_state_keys=policy), seen, secret, crash_on=1)("go", run_id="r")
    resumed = agent(backend.make(redact_state_keys=policy), seen, None)
    assert str(resumed.resume("r")) == "done"
    assert seen == [secret, "fresh-r"] and calls == ["r"]
    assert resumed.state.get("user") == "bob"
    assert secret.encode() not in backend.raw_bytes()


def test_redaction_and_encryption_together(backend: Backend) -> None:
    secret = f"tok-{uuid.uuid4().hex}"
    cipher = AESGCMCipher({"k1": b"k" * 32}, current="k1")
    first = agent(backend.make(redact_state_keys={"api_token"}, cipher=cipher), [], secret)
    first("go", run_id="r")
    loaded = backend.make(redact_state_keys={"api_token"}, cipher=cipher).load("r")
    assert loaded is not None and loaded.head["state"] == {"user": "bob"}


def test_restore_must_return_a_dict(backend: Backend) -> None:
    policy = RedactionPolicy(frozenset({"api_token"}), restore=lambda run_id: "not a dict")  # type: ignore[arg-type,return-value]
    agent(backend.make(redact_state_keys=policy), [], "x")("go", run_id="r")
    with pytest.raises(StoreError, match=r"run 'r': RedactionPolicy.restore returned str"):
        backend.make(redact_state_keys=policy).load("r")


@pytest.mark.parametrize(
    ("value", "match"),
    [
        ("api_token", "redact_state_keys must be a set of state key names"),
        (42, "redact_state_keys must be a set of state key names"),
        ({""}, "invalid key names"),
        ({1}, "invalid key names"),
    ],
)
def test_bad_redaction_configuration(value: Any, match: str) -> None:
    from tether.durable import MemoryStore

    with pytest.raises(ConfigurationError, match=match):
        MemoryStore(redact_state_keys=value)


def test_policy_restore_must_be_callable() -> None:
    with pytest.raises(ConfigurationError, match="restore must be a callable"):
        RedactionPolicy(frozenset({"k"}), restore="nope")  # type: ignore[arg-type]
