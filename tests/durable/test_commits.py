"""`durable/commits.py`: a session tells the observer of its context each committed write, as the store returns it."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import pytest

from tether import Agent, ScriptedModel, tool
from tether.conversation import SlidingWindowConversationManager
from tether.durable import RunStore, Step
from tether.durable.commits import COMMIT_OBSERVER
from tether.errors import StoreError
from tether.models import tool_call


class Recorder:
    def __init__(self, head_keys: tuple[str, ...] | None = None) -> None:
        self.head_keys = head_keys
        self.steps: list[Step] = []
        self.messages: dict[int, Any] = {}

    def committed(self, run_id: str, step: Step | None, messages: dict[int, Any]) -> None:
        assert run_id == "c"
        self.messages.update(messages)
        if step is not None:
            self.steps.append(step)


@tool
def echo(text: str) -> dict[str, Any]:
    """Echo ``text`` (a structured result, bytes included)."""
    return {"text": text, "raw": text.encode()}


def run_observed(store: RunStore, recorder: Recorder) -> list[Step]:
    """Two turns of 4 tool cycles (a trimmed conversation) told to ``recorder``; the stored steps."""

    async def main() -> None:
        COMMIT_OBSERVER.set(recorder)
        agent = Agent(
            model=ScriptedModel([tool_call("echo", {"text": f"t{i}"}) for i in range(4)] + ["done", "again"], stateful=True),
            tools=[echo],
            store=store,
            conversation_manager=SlidingWindowConversationManager(window_size=3),
        )
        agent.state.set("k", {"nested": [1, 2.5, None]})
        await agent.invoke_async("go", run_id="c")
        await agent.invoke_async("more", run_id="c")

    asyncio.run(main())
    return store.history("c")


def test_every_committed_step_and_message_is_told_as_the_store_reads_it(store: RunStore) -> None:
    recorder = Recorder()
    stored = run_observed(store, recorder)
    assert recorder.steps == stored and len(stored) > 10
    assert recorder.messages == dict(enumerate(store.messages("c", 0, stored[-1].seq)))


def test_an_observer_that_names_head_keys_gets_only_those(store: RunStore) -> None:
    keys = ("state", "start_seq", "not_a_key")
    recorder = Recorder(keys)
    stored = run_observed(store, recorder)
    assert recorder.steps == [replace(step, head={k: step.head[k] for k in keys if k in step.head}) for step in stored]
    assert recorder.steps[-1].head["state"]["k"] == {"nested": [1, 2.5, None]}


def test_a_write_that_fails_is_not_told(store: RunStore, monkeypatch: pytest.MonkeyPatch) -> None:
    recorder = Recorder()
    real = type(store).commit

    def commit(self: Any, run_id: str, prepared: Any, **options: Any) -> bool:
        if prepared.step == 2:
            raise StoreError("refused")
        return real(self, run_id, prepared, **options)

    monkeypatch.setattr(type(store), "commit", commit)
    monkeypatch.setattr(type(store), "send_commit", None, raising=False)

    async def main() -> None:
        COMMIT_OBSERVER.set(recorder)
        agent = Agent(model=ScriptedModel([tool_call("echo", {"text": "x"}), "done"]), tools=[echo], store=store)
        with pytest.raises(StoreError):
            await agent.invoke_async("go", run_id="c")

    asyncio.run(main())
    assert [step.step for step in recorder.steps] == [1]
