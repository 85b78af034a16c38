"""FileSessionManager: Strands' files both ways with the real strands-agents package, and the
session's durable run (restore, what a call after a dead process does, who wins when the
session went on without Tether)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.strands_facade.session_program import PROMPT, attach, call, plain, strands_model, tether_agent
from tether import tool
from tether.conversation import SlidingWindowConversationManager
from tether.hooks import BeforeToolCall
from tether.strands.session import FileSessionManager
from tether.strands.session._durable import RESUME, RESUME_THEN_SEND, SEND, plan_call, session_run_id

strands = pytest.importorskip("strands")


@tool
def step(n: int) -> str:
    """One step.

    Args:
        n: The step number.
    """
    return f"done {n}"


def strands_step() -> Any:
    @strands.tool
    def step(n: int) -> str:
        """One step.

        Args:
            n: The step number.
        """
        return f"done {n}"

    return step


def strands_agent(directory: Path, **kwargs: Any) -> Any:
    from strands.session import FileSessionManager as StrandsFileSessionManager

    manager = StrandsFileSessionManager(session_id="s1", storage_dir=str(directory))
    return strands.Agent(model=strands_model(), tools=[strands_step()], session_manager=manager, callback_handler=None, **kwargs)


def tether_session_agent(directory: Path, **kwargs: Any) -> tuple[Any, str | None]:
    agent = tether_agent(step, **kwargs)
    return agent, attach(agent, FileSessionManager(session_id="s1", storage_dir=str(directory)))


AGENT = "session_s1/agents/agent_default"


def agent_dir(directory: Path) -> Path:
    return directory / "session_s1" / "agents" / "agent_default"


def test_a_strands_session_continues_on_tether(tmp_path: Path) -> None:
    from strands.agent.conversation_manager import SlidingWindowConversationManager as StrandsWindow

    writer = strands_agent(tmp_path, conversation_manager=StrandsWindow(window_size=6), state={"visits": 1})
    writer(PROMPT)
    writer.state.set("visits", 2)
    writer(PROMPT)
    oracle = strands_agent(tmp_path, conversation_manager=StrandsWindow(window_size=6))
    removed = oracle.conversation_manager.removed_message_count
    assert removed > 0  # the window dropped messages: restoring must start at the right file

    agent, run_id = tether_session_agent(tmp_path, conversation_manager=SlidingWindowConversationManager(window_size=6))
    assert run_id == "strands.s1.default"
    assert plain(agent.messages) == plain(oracle.messages)
    assert agent.state.get() == oracle.state.get() == {"visits": 2}
    assert agent.conversation_manager.state(agent.run_state)["removed_message_count"] == removed

    result = call(agent, run_id, PROMPT)
    assert result.stop_reason == "end_turn"
    reader = strands_agent(tmp_path, conversation_manager=StrandsWindow(window_size=6))
    assert plain(reader.messages) == plain(agent.messages)
    assert reader.state.get() == {"visits": 2}
    ids = sorted(int(p.stem.split("_")[1]) for p in (agent_dir(tmp_path) / "messages").glob("message_*.json"))
    assert ids == list(range(18))  # three turns of six messages, numbered on from Strands' files


def test_tether_writes_the_files_strands_writes(tmp_path: Path) -> None:
    strands_agent(tmp_path / "strands", state={"k": "v"})(PROMPT)
    agent, run_id = tether_session_agent(tmp_path / "tether", state={"k": "v"})
    call(agent, run_id, PROMPT)

    def layout(root: Path) -> list[str]:
        return sorted(str(p.relative_to(root)) for p in root.rglob("*"))

    # the session directory is exactly Strands'; the run store is beside it, in <storage_dir>/.tether
    assert layout(tmp_path / "tether" / "session_s1") == layout(tmp_path / "strands" / "session_s1")
    assert sorted(p.name for p in (tmp_path / "tether").iterdir()) == [".tether", "session_s1"]
    assert (tmp_path / "tether" / ".tether" / "runs.sqlite").is_file()
    for name in ["session_s1/session.json", f"{AGENT}/agent.json", f"{AGENT}/messages/message_1.json"]:
        theirs, ours = (json.loads((tmp_path / side / name).read_text()) for side in ("strands", "tether"))
        assert sorted(ours) == sorted(theirs), name
    theirs, ours = (json.loads((agent_dir(tmp_path / side) / "agent.json").read_text()) for side in ("strands", "tether"))
    assert ours["state"] == theirs["state"] and ours["conversation_manager_state"] == theirs["conversation_manager_state"]
    assert sorted(ours["_internal_state"]) == sorted(theirs["_internal_state"])


def test_a_session_that_went_on_in_strands_wins_over_the_finished_run(tmp_path: Path) -> None:
    agent, run_id = tether_session_agent(tmp_path)
    call(agent, run_id, PROMPT)
    strands_side = strands_agent(tmp_path)
    strands_side(PROMPT)  # Strands continues the session: the files are ahead of the durable run
    again, run_id = tether_session_agent(tmp_path)
    assert plain(again.messages) == plain(strands_side.messages)
    assert len(again.messages) == 12
    call(again, run_id, PROMPT)
    assert plain(strands_agent(tmp_path).messages) == plain(again.messages)
    assert len(again.messages) == 18


class Died(BaseException):
    """Stands for the process dying inside a tool (nothing after it runs)."""


def stalled_session(directory: Path) -> None:
    """A session whose durable run stopped inside step 2 (started, no result stored)."""

    @tool(name="step")
    def dying(n: int) -> str:
        """One step.

        Args:
            n: The step number.
        """
        if n == 2:
            raise Died
        return f"done {n}"

    agent = tether_agent(dying)
    run_id = attach(agent, FileSessionManager(session_id="s1", storage_dir=str(directory)))
    with pytest.raises(Died):
        call(agent, run_id, PROMPT)


def test_plan_of_a_call_after_the_process_died(tmp_path: Path) -> None:
    stalled_session(tmp_path)
    agent, run_id = tether_session_agent(tmp_path)
    assert agent.run_state.cursor.phase == "tools"  # the run was adopted at attach
    assert plan_call(agent, PROMPT) == RESUME
    assert plan_call(agent, [{"text": PROMPT}]) == RESUME
    assert plan_call(agent, None) == RESUME
    assert plan_call(agent, "something else") == RESUME_THEN_SEND
    result = call(agent, run_id, PROMPT)
    assert result.message["content"] == [{"text": "answer: done 1, done 2"}]
    assert plan_call(agent, PROMPT) == SEND


def test_another_prompt_finishes_the_interrupted_turn_first(tmp_path: Path) -> None:
    stalled_session(tmp_path)
    agent, run_id = tether_session_agent(tmp_path)
    call(agent, run_id, "compute more")
    texts = [m["content"][0].get("text") for m in agent.messages if m["role"] == "user" and "text" in m["content"][0]]
    assert texts == [PROMPT, "compute more"]
    assert len(agent.messages) == 12
    assert plain(strands_agent(tmp_path).messages) == plain(agent.messages)


def test_run_ids_are_valid_and_distinct_for_any_session_and_agent_id() -> None:
    from tether.durable import validate_run_id

    ids = {session_run_id(s, a) for s in ["s1", "a b", "x" * 200, "é"] for a in ["default", "agent 2", "y" * 130]}
    assert len(ids) == 12
    for run_id in ids:
        assert validate_run_id(run_id) == run_id
    assert session_run_id("s1", "default") == "strands.s1.default"


def test_a_non_idempotent_call_in_doubt_is_surfaced_not_run_again(tmp_path: Path) -> None:
    runs: list[int] = []

    @tool(name="step", idempotent=False)
    def pay(n: int) -> str:
        """One step that must not run twice.

        Args:
            n: The step number.
        """
        runs.append(n)
        if n == 2 and len(runs) == 2:
            raise Died
        return f"done {n}"

    agent = tether_agent(pay)
    run_id = attach(agent, FileSessionManager(session_id="s1", storage_dir=str(tmp_path)))
    with pytest.raises(Died):
        call(agent, run_id, PROMPT)
    again = tether_agent(pay)
    run_id = attach(again, FileSessionManager(session_id="s1", storage_dir=str(tmp_path)))
    result = call(again, run_id, PROMPT)
    assert result.stop_reason == "interrupt"
    [interrupt] = result.interrupts
    assert interrupt.name == "tether.in_doubt" and interrupt.reason["tool"] == "step"
    assert runs == [1, 2]  # nothing ran again
    # meanwhile Strands sees the session as of the last committed step: no toolUse without its result
    reader = strands_agent(tmp_path)
    assert plain(reader.messages) == plain(again.messages[:3])
    assert plan_call(again, PROMPT) == RESUME  # the program run again gets the same interrupted result
    answer = [{"interruptResponse": {"interruptId": interrupt.id, "response": "done 2"}}]
    assert plan_call(again, answer) == SEND
    result = call(again, run_id, answer)
    assert result.message["content"] == [{"text": "answer: done 1, done 2"}]
    assert runs == [1, 2]
    assert plain(strands_agent(tmp_path).messages) == plain(again.messages)


def test_an_interrupted_turn_is_saved_as_strands_saves_one_and_answered_in_a_new_agent(tmp_path: Path) -> None:
    def approve(event: BeforeToolCall) -> None:
        if event.tool_use is not None and event.tool_use["input"]["n"] == 2:
            event.interrupt("approve", {"n": 2})

    agent = tether_agent(step, hooks=[approve])
    run_id = attach(agent, FileSessionManager(session_id="s1", storage_dir=str(tmp_path)))
    result = call(agent, run_id, PROMPT)
    assert result.stop_reason == "interrupt"
    # the toolUse waiting for the answer is shown, with the interrupt state (Strands' own interrupted session)
    reader = strands_agent(tmp_path)
    assert plain(reader.messages) == plain(agent.messages)
    assert "toolUse" in reader.messages[-1]["content"][-1]
    assert reader._interrupt_state.activated
    again = tether_agent(step, hooks=[approve])
    run_id = attach(again, FileSessionManager(session_id="s1", storage_dir=str(tmp_path)))
    [interrupt] = result.interrupts
    result = call(again, run_id, [{"interruptResponse": {"interruptId": interrupt.id, "response": "yes"}}])
    assert result.message["content"] == [{"text": "answer: done 1, done 2"}]
    assert plain(strands_agent(tmp_path).messages) == plain(again.messages)


def test_a_redaction_keeps_the_original_and_strands_restores_the_redaction(tmp_path: Path) -> None:
    manager = FileSessionManager(session_id="s1", storage_dir=str(tmp_path))
    agent = tether_agent(step)
    run_id = attach(agent, manager)
    call(agent, run_id, PROMPT)
    redacted = {"role": "assistant", "content": [{"text": "[redacted]"}]}
    agent.messages[-1] = redacted  # as Strands' agent does before it tells the session manager
    manager.redact_latest_message(redacted, agent)
    record = json.loads((agent_dir(tmp_path) / "messages" / "message_5.json").read_text())
    assert record["message"]["content"] == [{"text": "answer: done 1, done 2"}]
    assert record["redact_message"] == redacted
    assert plain(strands_agent(tmp_path).messages)[-1] == redacted
    call(agent, run_id, PROMPT)  # the next turn's writes keep the redaction
    assert json.loads((agent_dir(tmp_path) / "messages" / "message_5.json").read_text())["redact_message"] == redacted
    assert plain(strands_agent(tmp_path).messages)[5] == redacted


class Orchestrator:
    """What a multi-agent orchestrator gives a session manager: an id and its state."""

    def __init__(self, state: dict[str, Any]) -> None:
        self.id = "graph1"
        self.state = state

    def serialize_state(self) -> dict[str, Any]:
        return self.state

    def deserialize_state(self, payload: dict[str, Any]) -> None:
        self.state = payload


def test_multi_agent_state_is_kept_where_strands_keeps_it(tmp_path: Path) -> None:
    manager = FileSessionManager(session_id="s1", storage_dir=str(tmp_path))
    first = Orchestrator({"type": "graph", "status": "executing", "completed_nodes": ["a"]})
    manager.initialize_multi_agent(first)
    first.state = {**first.state, "completed_nodes": ["a", "b"]}
    manager.sync_multi_agent(first)
    from strands.session import FileSessionManager as StrandsFileSessionManager

    theirs = StrandsFileSessionManager(session_id="s1", storage_dir=str(tmp_path)).read_multi_agent("s1", "graph1")
    assert theirs == first.state
    restored = Orchestrator({})
    FileSessionManager(session_id="s1", storage_dir=str(tmp_path)).initialize_multi_agent(restored)
    assert restored.state == first.state


def test_the_sessions_of_a_storage_dir_share_one_run_store_beside_them(tmp_path: Path) -> None:
    from strands.session import FileSessionManager as StrandsFileSessionManager

    from tether.durable.sqlite import SQLiteStore

    first, first_run = tether_session_agent(tmp_path)
    call(first, first_run, PROMPT)
    second = tether_agent(step)
    second_run = attach(second, FileSessionManager(session_id="s2", storage_dir=str(tmp_path)))
    call(second, second_run, PROMPT)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".tether", "session_s1", "session_s2"]
    store = SQLiteStore(str(tmp_path / ".tether" / "runs.sqlite"))
    assert store.head(str(first_run)) is not None and store.head(str(second_run)) is not None

    FileSessionManager(session_id="s1", storage_dir=str(tmp_path)).delete_session("s1")
    assert store.head(str(first_run)) is None  # the session's runs go with it; the other session's stay
    assert store.head(str(second_run)) is not None
    assert sorted(p.name for p in tmp_path.iterdir()) == [".tether", "session_s2"]
    manager = StrandsFileSessionManager(session_id="s2", storage_dir=str(tmp_path))
    reader = strands.Agent(model=strands_model(), tools=[strands_step()], session_manager=manager, callback_handler=None)
    assert plain(reader.messages) == plain(second.messages)
