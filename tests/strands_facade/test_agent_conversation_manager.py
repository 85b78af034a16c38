"""``tether.strands.agent.conversation_manager``: Strands' arguments on Tether's managers."""

from __future__ import annotations

from typing import Any

import pytest

import tether.strands as ts
from tether.errors import ConfigurationError
from tether.strands.agent.conversation_manager import SlidingWindowConversationManager, SummarizingConversationManager

from .test_agent import TetherFake, chunks, plain, strands_fake


def test_sliding_window_trims_as_strands_and_counts_removed_messages() -> None:
    import strands

    script: list[Any] = [[{"text": f"answer {n}"}] for n in range(3)]
    window = strands.agent.SlidingWindowConversationManager(window_size=4)
    theirs = strands.Agent(model=strands_fake(script), conversation_manager=window, callback_handler=None)
    ours = ts.Agent(model=TetherFake(script), conversation_manager=SlidingWindowConversationManager(window_size=4), callback_handler=None)
    for n in range(3):
        theirs(f"question {n}")
        ours(f"question {n}")
    assert [plain(m) for m in ours.messages] == [plain(m) for m in theirs.messages]
    assert len(ours.messages) == 4
    state = ours.take_snapshot(preset="session").data["conversation_manager_state"]
    assert state == theirs.take_snapshot(preset="session").data["conversation_manager_state"]
    assert state["removed_message_count"] == 2


@pytest.mark.parametrize("argument", [{"per_turn": True}, {"pin_first": 1}, {"proactive_compression": True}])
def test_sliding_window_arguments_tether_lacks_are_refused_by_name(argument: dict[str, Any]) -> None:
    with pytest.raises(ConfigurationError, match=next(iter(argument))):
        SlidingWindowConversationManager(**argument)


def test_sliding_window_keeps_strands_defaults() -> None:
    manager = SlidingWindowConversationManager()
    assert (manager.window_size, manager.should_truncate_results) == (40, True)


def test_summarizing_state_in_snapshots_is_strands_shape() -> None:
    import strands

    theirs = strands.Agent(
        model=strands_fake([]), conversation_manager=strands.agent.SummarizingConversationManager(), callback_handler=None
    ).take_snapshot(preset="session")
    ours = ts.Agent(model=TetherFake([]), conversation_manager=SummarizingConversationManager(), callback_handler=None)
    assert ours.take_snapshot(preset="session").data["conversation_manager_state"] == theirs.data["conversation_manager_state"]


def test_summarizing_uses_the_summarization_agents_model_and_clamps_the_ratio() -> None:
    summarizer = ts.Agent(model=TetherFake([]), callback_handler=None)
    manager = SummarizingConversationManager(summary_ratio=0.95, summarization_agent=summarizer)
    assert manager.summarization_model is summarizer.model
    assert manager.summary_ratio == 0.8
    assert SummarizingConversationManager(summarization_system_prompt="Summarize.").summary_prompt == "Summarize."
    assert SummarizingConversationManager(summary_ratio=0.01).summary_ratio == 0.1


def test_summarizing_refuses_an_agent_and_a_system_prompt_as_strands() -> None:
    import strands

    summarizer = ts.Agent(model=TetherFake([]), callback_handler=None)
    with pytest.raises(ValueError, match="Cannot provide both") as theirs:
        strands.agent.SummarizingConversationManager(summarization_agent=summarizer, summarization_system_prompt="S.")
    with pytest.raises(ConfigurationError, match="Cannot provide both") as ours:
        SummarizingConversationManager(summarization_agent=summarizer, summarization_system_prompt="S.")
    assert str(ours.value) == str(theirs.value)


def recording_model(base: type, overflow: type[Exception], script: list[str | None]) -> Any:
    """A ``Model`` subclass of ``base`` replying ``script`` in turn (None: raise ``overflow``), recording each request."""

    class Recording(base):  # type: ignore[misc,valid-type]
        def __init__(self) -> None:
            self.script = list(script)
            self.requests: list[dict[str, Any]] = []

        def update_config(self, **config: Any) -> None:
            pass

        def get_config(self) -> Any:
            return {}

        async def structured_output(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError
            yield

        async def stream(self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any) -> Any:
            self.requests.append(
                {
                    "messages": [plain(m) for m in messages],
                    "tools": sorted(spec["name"] for spec in tool_specs or []),
                    "system_prompt": system_prompt,
                }
            )
            reply = self.script.pop(0)
            if reply is None:
                raise overflow("the context window is full")
            for chunk in chunks([{"text": reply}]):
                yield chunk

    return Recording()


@pytest.mark.parametrize("with_agent", [False, True], ids=["own_model", "summarization_agent"])
def test_summarizing_twice_matches_strands(with_agent: bool) -> None:
    # Two overflows: the second summary replaces the first, which is not counted as removed.
    import strands
    from strands.types.exceptions import ContextWindowOverflowException as TheirOverflow

    from tether.strands.models import Model as OurModel
    from tether.strands.types.exceptions import ContextWindowOverflowException as OurOverflow

    main: list[str | None] = ["a1", "a2", "a3", None, "a4", None, "a5"]
    summaries = ["S1", "S2"]
    if not with_agent:
        main = ["a1", "a2", "a3", None, "S1", "a4", None, "S2", "a5"]
    seen = {}
    for side, agent_class, manager_class, base, overflow in (
        ("strands", strands.Agent, strands.agent.SummarizingConversationManager, strands.models.Model, TheirOverflow),
        ("tether", ts.Agent, SummarizingConversationManager, OurModel, OurOverflow),
    ):
        model = recording_model(base, overflow, main)
        summarizer_model = recording_model(base, overflow, summaries)
        arguments: dict[str, Any] = {"summary_ratio": 0.5, "preserve_recent_messages": 2}
        if with_agent:
            arguments["summarization_agent"] = agent_class(model=summarizer_model, system_prompt="Be brief.", callback_handler=None)
        manager = manager_class(**arguments)
        agent = agent_class(model=model, conversation_manager=manager, callback_handler=None)
        counts = []
        for n in range(1, 6):
            agent(f"q{n}")
            counts.append(manager.removed_message_count)
        seen[side] = {
            "messages": [plain(m) for m in agent.messages],
            "state": {**manager.get_state(), "summary_message": plain(manager.get_state()["summary_message"])},
            "counts": counts,
            "requests": model.requests,
            "summarizer_requests": summarizer_model.requests,
        }
    assert seen["tether"] == seen["strands"]
    assert seen["tether"]["counts"] == [0, 0, 0, 3, 5]


@pytest.mark.parametrize("manager_class", ["NullConversationManager", "SlidingWindowConversationManager", "SummarizingConversationManager"])
def test_a_new_managers_state_and_restore_from_session_match_strands(manager_class: str) -> None:
    import strands.agent.conversation_manager as theirs

    import tether.strands.agent.conversation_manager as ours

    mine, their = getattr(ours, manager_class)(), getattr(theirs, manager_class)()
    assert mine.get_state() == their.get_state()
    assert mine.removed_message_count == their.removed_message_count == 0
    state = {**their.get_state(), "removed_message_count": 4}
    if manager_class == "SummarizingConversationManager":
        state["summary_message"] = {"role": "user", "content": [{"text": "earlier"}]}
    assert mine.restore_from_session(state) == their.restore_from_session(state)
    assert mine.get_state() == their.get_state()
    assert mine.removed_message_count == 4
    foreign = {**state, "__name__": "SomeOtherManager"}
    with pytest.raises(ValueError):
        their.restore_from_session(foreign)
    with pytest.raises(ValueError, match="SomeOtherManager"):
        mine.restore_from_session(foreign)
    assert mine.get_state() == their.get_state()


def test_a_managers_state_is_the_agents_run_state() -> None:
    # get_state() shows what the agent's snapshots and sessions store; a state restored before
    # the first invocation is carried into the agent's run.
    manager = SlidingWindowConversationManager(window_size=2)
    manager.restore_from_session({"__name__": "SlidingWindowConversationManager", "removed_message_count": 5})
    agent = ts.Agent(model=TetherFake([[{"text": "one"}], [{"text": "two"}]]), conversation_manager=manager, callback_handler=None)
    agent("first")
    agent("second")
    assert manager.removed_message_count == 7
    assert agent.take_snapshot(preset="session").data["conversation_manager_state"] == manager.get_state()
    manager.removed_message_count = 9
    assert agent.take_snapshot(preset="session").data["conversation_manager_state"]["removed_message_count"] == 9


def test_a_state_written_by_another_manager_is_refused() -> None:
    from tether.errors import SnapshotError

    sliding = ts.Agent(model=TetherFake([]), callback_handler=None)
    summarizing = ts.Agent(model=TetherFake([]), conversation_manager=SummarizingConversationManager(), callback_handler=None)
    with pytest.raises(SnapshotError, match="SlidingWindowConversationManager"):
        summarizing.load_snapshot(sliding.take_snapshot(preset="session"))
