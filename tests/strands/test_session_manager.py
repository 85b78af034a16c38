"""The session manager in one process: metrics accumulate across invocations, resumes and managers;
hooks tell the invocation that finishes a cut-off turn from a new one; the run is an ordinary Tether
run that the CLI reads."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from strands import Agent, tool
from strands.hooks import BeforeModelCallEvent, MessageAddedEvent

from tether.durable import SQLiteStore
from tether.errors import PromptError
from tether.strands._run import tool_uses
from tether.strands.session_manager import TetherSessionManager

from .conftest import PROGRAMS, SRC

sys.path.insert(0, str(PROGRAMS))
from _program_kit import ScriptModel

SCRIPT: list[dict[str, Any]] = [{"text": "one"}, {"text": "two"}, {"text": "three"}]


class Flaky(ScriptModel):
    """Dies (a BaseException, as a process being stopped) on its first call of the second turn."""

    died = False

    async def stream(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
        if sum(1 for m in messages if m["role"] == "assistant") == 1 and not Flaky.died:
            Flaky.died = True
            raise KeyboardInterrupt
        async for event in super().stream(messages, *args, **kwargs):
            yield event


def test_metrics_accumulate_and_hooks_tell_a_resume(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    Flaky.died = False
    manager = TetherSessionManager("m-1", store=store)
    agent = Agent(model=Flaky(SCRIPT), callback_handler=None, session_manager=manager)
    assert str(agent("first")).strip() == "one"
    try:
        agent("second")
    except KeyboardInterrupt:
        pass
    else:
        raise AssertionError("the model did not die")
    assert manager.metrics(agent)["model_call_count"] == 1
    manager.close()

    seen: list[bool] = []
    manager = TetherSessionManager("m-1", store=store)
    agent = Agent(model=ScriptModel(SCRIPT), callback_handler=None, session_manager=manager)
    agent.hooks.add_callback(BeforeModelCallEvent, lambda event: seen.append(event.invocation_state["tether"]["resumed"]))
    assert str(agent("second")).strip() == "two"  # the cut-off turn, finished
    assert manager.resumed(agent)
    assert str(agent("third")).strip() == "three"  # a new turn
    assert not manager.resumed(agent)
    assert seen == [True, False]
    metrics = manager.metrics(agent)
    assert metrics["model_call_count"] == 3
    assert metrics["usage"]["total_tokens"] == 45  # 15 a call, the first process's included
    assert [m["content"][0]["text"] for m in agent.messages] == ["first", "one", "second", "two", "third", "three"]
    manager.close()

    listed = subprocess.run(
        [sys.executable, "-m", "tether", "show", "strands.m-1.default", "--store", str(store)],
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert listed.returncode == 0, listed.stderr
    assert "finished" in listed.stdout and "three" in listed.stdout
    assert SQLiteStore(store).load("strands.m-1.default") is not None


def test_another_prompt_while_a_turn_is_cut_off_is_refused(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    Flaky.died = False
    manager = TetherSessionManager("m-2", store=store)
    agent = Agent(model=Flaky(SCRIPT), callback_handler=None, session_manager=manager)
    agent("first")
    try:
        agent("second")
    except KeyboardInterrupt:
        pass
    manager.close()
    before = SQLiteStore(store).load("strands.m-2.default")
    manager = TetherSessionManager("m-2", store=store)
    agent = Agent(model=ScriptModel(SCRIPT), callback_handler=None, session_manager=manager)
    with pytest.raises(PromptError, match=r"strands\.m-2\.default.*cut off.*'second'"):
        agent("something else")
    after = SQLiteStore(store).load("strands.m-2.default")
    assert before is not None and after is not None
    assert (after.head, after.messages) == (before.head, before.messages)
    assert str(agent("second")).strip() == "two"  # the same call still finishes it
    manager.close()


class Person(BaseModel):
    name: str


class Answers(ScriptModel):
    """The script, and a structured output for Strands' ``Agent.structured_output``."""

    async def structured_output(self, output_model: Any, prompt: Any, system_prompt: Any = None, **kwargs: Any) -> Any:
        yield {"output": output_model(name=f"Ada ({len(prompt)} messages)")}


def test_structured_output_reads_the_conversation_and_opens_no_turn(tmp_path: Path) -> None:
    """``agent.structured_output(...)`` only reads the conversation: the run stays finished, and the
    next process continues the session. (It opened a turn that never closed and marked the run
    failed, so the next process took the last answer for a cut-off turn's, held it out of the
    conversation and refused a new prompt.)"""
    store = tmp_path / "runs.db"
    with TetherSessionManager("so-1", store=store) as manager:
        agent = Agent(model=Answers(SCRIPT), callback_handler=None, session_manager=manager)
        agent("Who?")
        with pytest.warns(DeprecationWarning):
            assert agent.structured_output(Person, "Name only").name == "Ada (3 messages)"
    runs = SQLiteStore(store)
    assert [run.status for run in runs.list_runs()] == ["finished"]
    runs.close()
    with TetherSessionManager("so-1", store=store) as manager:
        agent = Agent(model=Answers(SCRIPT), callback_handler=None, session_manager=manager)
        assert [m["content"] for m in agent.messages] == [[{"text": "Who?"}], [{"text": "one"}]]
        assert str(agent("And?")).strip() == "two"
        assert not manager.resumed(agent)


def test_a_conversation_set_again_before_the_cut_off_call_keeps_its_prompt(tmp_path: Path) -> None:
    """A program (``load_snapshot``) or Strands itself (the summarizing conversation manager's
    agent) sets ``agent.messages`` to the conversation before the cut-off turn, then makes the cut-off
    call: the turn is finished on the stored conversation, prompt included. (The prompt was dropped:
    the turn resumed on the conversation set, without it.)"""
    store = tmp_path / "runs.db"
    Flaky.died = False
    with TetherSessionManager("m-3", store=store) as manager:
        agent = Agent(model=Flaky(SCRIPT), callback_handler=None, session_manager=manager)
        agent("first")
        before = [dict(message) for message in agent.messages]
        with pytest.raises(KeyboardInterrupt):
            agent("second")
    with TetherSessionManager("m-3", store=store) as manager:
        agent = Agent(model=ScriptModel(SCRIPT), callback_handler=None, session_manager=manager)
        agent.messages = [dict(message) for message in before]
        assert str(agent("second")).strip() == "two"
        assert manager.resumed(agent)
        assert [m["content"][0]["text"] for m in agent.messages] == ["first", "one", "second", "two"]


def test_a_message_appended_by_hand_before_the_cut_off_call_is_restored_once(tmp_path: Path) -> None:
    """The program appends a message to ``agent.messages`` itself, then calls ``agent()``; killed in
    that call and started again, it appends the message again before the same call: the turn ends
    with the message in the conversation once. (It was there twice: the restored conversation had
    it already, stored with the cut-off turn.)"""
    store = tmp_path / "runs.db"
    Flaky.died = False
    hand = {"role": "user", "content": [{"text": "appended by hand"}]}
    with TetherSessionManager("m-4", store=store) as manager:
        agent = Agent(model=Flaky(SCRIPT), callback_handler=None, session_manager=manager)
        agent("first")
        agent.messages.append(dict(hand))
        with pytest.raises(KeyboardInterrupt):
            agent()
    with TetherSessionManager("m-4", store=store) as manager:
        agent = Agent(model=ScriptModel(SCRIPT), callback_handler=None, session_manager=manager)
        agent.messages.append(dict(hand))
        assert str(agent()).strip() == "two"
        assert manager.resumed(agent)
        assert [m["content"][0]["text"] for m in agent.messages] == ["first", "one", "appended by hand", "two"]
    with TetherSessionManager("m-4", store=store) as manager:  # and it is stored once
        agent = Agent(model=ScriptModel(SCRIPT), callback_handler=None, session_manager=manager)
        assert [m["content"][0]["text"] for m in agent.messages] == ["first", "one", "appended by hand", "two"]


@tool
def lookup(key: str) -> str:
    """Look up a key.

    Args:
        key: The key.
    """
    return {"pi": "3.14159"}.get(key, "unknown")


LOOKUPS: list[dict[str, Any]] = [
    {"tools": [("tu-1", "lookup", {"key": "pi"})]},
    {"tools": [("tu-2", "lookup", {"key": "e"})]},
    {"text": "pi is 3.14159, e is unknown"},
]


class DiesAtTheAnswer(ScriptModel):
    """Dies (as a process being stopped) at the turn's third model call, both tool results recorded."""

    async def stream(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
        if sum(1 for m in messages if m["role"] == "assistant") == 2:
            raise KeyboardInterrupt
        async for event in super().stream(messages, *args, **kwargs):
            yield event


def test_the_metrics_of_a_resumed_turn_count_the_calls_recorded_before_the_crash(tmp_path: Path) -> None:
    """``result.metrics`` of a turn finished after a crash are the uninterrupted turn's (tool metrics,
    cycle count, usage), not only the restarting process's calls. (The tool whose results were
    recorded before the crash was missing from ``tool_metrics``: KeyError.)"""
    plain = Agent(model=ScriptModel(LOOKUPS), tools=[lookup], callback_handler=None)("What are pi and e?").metrics
    store = tmp_path / "runs.db"
    with TetherSessionManager("m-5", store=store) as manager:
        agent = Agent(model=DiesAtTheAnswer(LOOKUPS), tools=[lookup], callback_handler=None, session_manager=manager)
        with pytest.raises(KeyboardInterrupt):
            agent("What are pi and e?")
    with TetherSessionManager("m-5", store=store) as manager:
        agent = Agent(model=ScriptModel(LOOKUPS), tools=[lookup], callback_handler=None, session_manager=manager)
        result = agent("What are pi and e?")
        assert manager.resumed(agent)
        metrics = result.metrics
        counts = {name: (m.call_count, m.success_count, m.error_count) for name, m in metrics.tool_metrics.items()}
        assert counts == {name: (m.call_count, m.success_count, m.error_count) for name, m in plain.tool_metrics.items()}
        assert counts == {"lookup": (2, 2, 0)}
        assert metrics.cycle_count == plain.cycle_count == 3
        assert metrics.accumulated_usage == plain.accumulated_usage
        assert manager.metrics(agent)["usage"]["total_tokens"] == 45  # the run's own: each call counted once


class Collector:
    """A callback handler keeping what a program reads from it: text, tool uses, messages."""

    def __init__(self) -> None:
        self.text = ""
        self.tools: dict[str, tuple[str, str]] = {}
        self.messages: list[Any] = []

    def __call__(self, **kwargs: Any) -> None:
        self.text += kwargs.get("data", "")
        if "current_tool_use" in kwargs:
            use = kwargs["current_tool_use"]
            self.tools[use["toolUseId"]] = (use["name"], use["input"])
        if "message" in kwargs:
            self.messages.append({"role": kwargs["message"]["role"], "content": kwargs["message"]["content"]})


@tool(name="lookup")
def dies_inside(key: str) -> str:
    """Look up a key (dies, as a process being stopped, at the call for "e": the first's result recorded).

    Args:
        key: The key.
    """
    if key == "e":
        raise KeyboardInterrupt
    return {"pi": "3.14159"}.get(key, "unknown")


def _dies_after_the_answer(agent: Agent) -> None:
    def stop(event: MessageAddedEvent) -> None:  # after the manager stored it: the turn is still open
        if event.message["role"] == "assistant" and not tool_uses(event.message):
            raise KeyboardInterrupt

    agent.hooks.add_callback(MessageAddedEvent, stop)


@pytest.mark.parametrize("where", ["model", "tool", "answer"])
def test_a_resumed_turn_streams_its_recorded_responses_to_the_callback_handler(tmp_path: Path, where: str) -> None:
    """Killed during the turn's last model call, inside its second tool call, or after its answer
    was stored: the restarted program's callback handler gets the text, tool uses and messages of
    the uninterrupted turn. (A recorded response was not streamed again: the handler saw none of
    the tool uses recorded before the crash, and no text of a recorded answer.)"""
    plain = Collector()
    Agent(model=ScriptModel(LOOKUPS), tools=[lookup], callback_handler=plain)("What are pi and e?")
    assert set(plain.tools) == {"tu-1", "tu-2"} and plain.text == "pi is 3.14159, e is unknown"
    store = tmp_path / "runs.db"
    with TetherSessionManager("m-7", store=store) as manager:
        model = DiesAtTheAnswer(LOOKUPS) if where == "model" else ScriptModel(LOOKUPS)
        tools = [dies_inside] if where == "tool" else [lookup]
        agent = Agent(model=model, tools=tools, callback_handler=None, session_manager=manager)
        if where == "answer":
            _dies_after_the_answer(agent)
        with pytest.raises(KeyboardInterrupt):
            agent("What are pi and e?")
    with TetherSessionManager("m-7", store=store) as manager:
        seen = Collector()
        agent = Agent(model=ScriptModel(LOOKUPS), tools=[lookup], callback_handler=seen, session_manager=manager)
        assert str(agent("What are pi and e?")).strip() == "pi is 3.14159, e is unknown"
        assert manager.resumed(agent)
    assert seen.tools == plain.tools
    assert seen.text == plain.text
    assert seen.messages == plain.messages
