"""A custom Strands ``Model`` subclass runs on Tether as it runs on Strands.

The same scripted model class is written twice, once against the real
``strands.models.Model`` and once against :class:`tether.strands.models.Model`
(:func:`script_model_class`); the first runs under ``strands.Agent``, the second under
``tether.Agent(model=to_tether_model(...))``, and both must end with the same messages, stop
reason and usage, and must have handed the model the same arguments.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator
from typing import Any

import pytest

import tether
from tether.errors import ContextWindowOverflowError, ModelResponseError, ModelThrottledError
from tether.strands.models import Model as FacadeModel
from tether.strands.models._adapt import strands_model_of, to_tether_model
from tether.strands.models._custom import INVOCATION_STATE, CustomModel, map_error, strands_messages

strands = pytest.importorskip("strands")
from strands.models import Model as StrandsModel  # noqa: E402
from strands.types.exceptions import ContextWindowOverflowException, ModelThrottledException  # noqa: E402

Script = list[Any]  # each item: a list of events, or an exception instance to raise


def script_model_class(base: type) -> type:
    """A model class on ``base`` that answers each ``stream`` call with the next script item
    and records what each call was given."""

    class ScriptModel(base):  # type: ignore[misc, valid-type]
        def __init__(self, script: Script) -> None:
            self.script = list(script)
            self.calls: list[dict[str, Any]] = []
            self.config: dict[str, Any] = {"model_id": "script-1"}

        def update_config(self, **model_config: Any) -> None:
            self.config.update(model_config)

        def get_config(self) -> dict[str, Any]:
            return self.config

        async def structured_output(self, output_model: Any, prompt: Any, system_prompt: Any = None, **kwargs: Any) -> Any:
            yield {}

        async def stream(
            self,
            messages: Any,
            tool_specs: Any = None,
            system_prompt: Any = None,
            *,
            tool_choice: Any = None,
            system_prompt_content: Any = None,
            invocation_state: Any = None,
            **kwargs: Any,
        ) -> AsyncIterator[dict[str, Any]]:
            self.calls.append(
                {
                    "messages": copy.deepcopy(messages),
                    "tools": [spec["name"] for spec in tool_specs] if tool_specs is not None else None,
                    "system_prompt": system_prompt,
                    "system_prompt_content": copy.deepcopy(system_prompt_content),
                    "tool_choice": tool_choice,
                }
            )
            item = self.script.pop(0)
            if isinstance(item, BaseException):
                raise item
            for event in item:
                yield copy.deepcopy(event)

    return ScriptModel


def text_turn(text: str, usage: tuple[int, int], stop: str = "end_turn") -> list[dict[str, Any]]:
    inp, out = usage
    return [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockStart": {"start": {}}},
        {"contentBlockDelta": {"delta": {"text": text[: len(text) // 2]}}},
        {"contentBlockDelta": {"delta": {"text": text[len(text) // 2 :]}}},
        {"contentBlockStop": {}},
        {"messageStop": {"stopReason": stop}},
        {"metadata": {"usage": {"inputTokens": inp, "outputTokens": out, "totalTokens": inp + out}, "metrics": {"latencyMs": 3}}},
    ]


TOOL_TURN: list[dict[str, Any]] = [
    {"messageStart": {"role": "assistant"}},
    {"contentBlockStart": {"start": {}}},
    {"contentBlockDelta": {"delta": {"reasoningContent": {"text": "The user wants "}}}},
    {"contentBlockDelta": {"delta": {"reasoningContent": {"text": "a sum."}}}},
    {"contentBlockDelta": {"delta": {"reasoningContent": {"signature": "sig-"}}}},
    {"contentBlockDelta": {"delta": {"reasoningContent": {"signature": "123"}}}},
    {"contentBlockStop": {}},
    {"contentBlockStart": {"start": {}}},
    {"contentBlockDelta": {"delta": {"text": "Let me add."}}},
    {"contentBlockStop": {}},
    {"contentBlockStart": {"start": {"toolUse": {"toolUseId": "tooluse_1", "name": "add"}}}},
    {"contentBlockDelta": {"delta": {"toolUse": {"input": '{"a": 1, '}}}},
    {"contentBlockDelta": {"delta": {"toolUse": {"input": '"b": 2}'}}}},
    {"contentBlockStop": {}},
    {"contentBlockStart": {"start": {"toolUse": {"toolUseId": "tooluse_2", "name": "noon"}}}},
    {"contentBlockStop": {}},  # no input deltas: input {}
    # end_turn with tool calls: Strands runs the tools anyway (stop reason tool_use)
    {"messageStop": {"stopReason": "end_turn"}},
    {"metadata": {"usage": {"inputTokens": 10, "outputTokens": 7}, "metrics": {"latencyMs": 5}}},
]


def add(a: int, b: int) -> str:
    """Add two integers.

    Args:
        a: The first.
        b: The second.
    """
    return str(a + b)


def noon() -> str:
    """The time at noon."""
    return "12:00"


def run_strands(script: Script, prompts: list[str], **agent_args: Any) -> tuple[Any, list[Any], Any]:
    from strands import Agent, ModelRetryStrategy, tool

    model = script_model_class(StrandsModel)(script)
    agent = Agent(
        model=model,
        tools=[tool(add), tool(noon)],
        system_prompt="Be brief.",
        callback_handler=None,
        retry_strategy=ModelRetryStrategy(initial_delay=0, max_delay=0),
        **agent_args,
    )
    results = [agent(prompt) for prompt in prompts]
    return agent, results, model


def run_tether(script: Script, prompts: list[str], **agent_args: Any) -> tuple[Any, list[Any], Any]:
    model = script_model_class(FacadeModel)(script)
    agent = tether.Agent(
        model=to_tether_model(model),
        tools=[tether.tool(add), tether.tool(noon)],
        system_prompt="Be brief.",
        retry=tether.RetryPolicy(initial_delay=0, max_delay=0),
        **agent_args,
    )
    results = [agent(prompt) for prompt in prompts]
    return agent, results, model


def plain(messages: list[Any]) -> list[dict[str, Any]]:
    """Role and content of each message (Strands may keep other keys beside them)."""
    return [{"role": m["role"], "content": m["content"]} for m in messages]


def strands_usage(result: Any) -> dict[str, int]:
    usage = result.metrics.accumulated_usage
    return {"input_tokens": usage["inputTokens"], "output_tokens": usage["outputTokens"], "total_tokens": usage["totalTokens"]}


def assert_same_runs(script: Script, prompts: list[str]) -> tuple[Any, Any]:
    s_agent, s_results, s_model = run_strands(copy.deepcopy(script), prompts)
    t_agent, t_results, t_model = run_tether(copy.deepcopy(script), prompts)
    assert plain(t_agent.messages) == plain(s_agent.messages)
    assert [r.stop_reason for r in t_results] == [r.stop_reason for r in s_results]
    assert plain([r.message for r in t_results]) == plain([r.message for r in s_results])
    assert t_results[-1].metrics.usage == strands_usage(s_results[-1])
    assert t_model.calls == s_model.calls
    return s_model, t_model


def test_text_reasoning_and_tool_calls_give_strands_messages_stop_reasons_and_usage() -> None:
    script = [TOOL_TURN, text_turn("The sum is 3.", (20, 4))]
    _, t_model = assert_same_runs(script, ["What is 1 + 2?"])
    assert len(t_model.calls) == 2
    second = t_model.calls[1]
    assert second["system_prompt"] == "Be brief." and second["system_prompt_content"] == [{"text": "Be brief."}]
    assert second["tools"] == ["add", "noon"]
    assistant = second["messages"][1]["content"]
    assert assistant[0] == {"reasoningContent": {"reasoningText": {"text": "The user wants a sum.", "signature": "sig-123"}}}
    assert [b["toolUse"]["input"] for b in assistant if "toolUse" in b] == [{"a": 1, "b": 2}, {}]


def test_several_invocations_accumulate_usage_as_strands() -> None:
    script = [text_turn("Hello.", (3, 2)), text_turn("Again.", (5, 1), stop="stop_sequence")]
    assert_same_runs(script, ["hi", "once more"])


def test_a_throttled_call_is_retried_as_strands_retries_it() -> None:
    script = [ModelThrottledException("slow down"), ModelThrottledException("still"), text_turn("Done.", (4, 2))]
    _, t_model = assert_same_runs(script, ["go"])
    assert len(t_model.calls) == 3


def test_an_overflow_makes_the_conversation_manager_reduce_and_retry() -> None:
    first = [TOOL_TURN, text_turn("The sum is 3.", (20, 4))]
    script = [*first, ContextWindowOverflowException("too long"), text_turn("Fine.", (2, 1))]
    _, t_model = assert_same_runs(script, ["What is 1 + 2?", "and now?"])
    assert len(t_model.calls[-1]["messages"]) < len(t_model.calls[-2]["messages"])


def test_any_other_error_propagates_as_raised() -> None:
    boom = LookupError("the model broke")
    with pytest.raises(LookupError, match="the model broke"):
        run_tether([boom], ["go"])
    with pytest.raises(LookupError, match="the model broke"):
        run_strands([LookupError("the model broke")], ["go"])


def test_throttling_that_never_ends_raises_tethers_throttling_error_with_the_models_as_cause() -> None:
    errors = [ModelThrottledException(f"slow {i}") for i in range(6)]
    with pytest.raises(ModelThrottledError) as caught:
        run_tether(errors, ["go"])
    assert isinstance(caught.value.__cause__, ModelThrottledException)


def test_exceptions_are_recognised_by_class_name_anywhere_in_the_mro() -> None:
    class ModelThrottledException(Exception):  # a program's own, or the facade's, by that name
        pass

    class Subclass(ModelThrottledException):
        pass

    class ContextWindowOverflowException(RuntimeError):
        pass

    assert isinstance(map_error(Subclass("x")), ModelThrottledError)
    assert isinstance(map_error(ContextWindowOverflowException("x")), ContextWindowOverflowError)
    assert map_error(ValueError("x")) is None
    own = ModelThrottledError("already Tether's")
    assert map_error(own) is None  # raised unchanged, keeping its class


def collect(model: Any, **request: Any) -> list[dict[str, Any]]:
    full = {"messages": [], "system_prompt": None, "tool_specs": [], "tool_choice": None, "model_state": {}, **request}

    async def run() -> list[dict[str, Any]]:
        return [event async for event in CustomModel(model).stream(full)]  # type: ignore[arg-type]

    return asyncio.run(run())


def folded(events: list[dict[str, Any]]) -> dict[str, Any]:
    from tether.loop.stream import StreamAccumulator

    acc = StreamAccumulator()
    for event in events:
        acc.add(event)  # type: ignore[arg-type]
    return acc.message()  # type: ignore[return-value]


def strands_folded(events: list[dict[str, Any]]) -> dict[str, Any]:
    from strands.event_loop.streaming import process_stream

    async def chunks() -> AsyncIterator[dict[str, Any]]:
        for event in copy.deepcopy(events):
            yield event

    async def run() -> dict[str, Any]:
        last: Any = None
        async for item in process_stream(chunks()):  # type: ignore[arg-type]
            last = item
        return last["stop"][1]  # type: ignore[no-any-return]

    return asyncio.run(run())


@pytest.mark.parametrize(
    "events",
    [
        pytest.param(TOOL_TURN, id="reasoning-text-tools"),
        pytest.param(
            [
                {"contentBlockDelta": {"delta": {"text": ""}}},
                {"contentBlockStop": {}},
                {"contentBlockDelta": {"delta": {"reasoningContent": {"signature": "only-a-signature"}}}},
                {"contentBlockStop": {}},
                {"contentBlockDelta": {"delta": {"reasoningContent": {"redactedContent": b"ab"}}}},
                {"contentBlockDelta": {"delta": {"reasoningContent": {"redactedContent": b"cd"}}}},
                {"contentBlockStop": {}},
            ],
            id="empty-text-lone-signature-redacted-parts",
        ),
        pytest.param(
            [
                {"contentBlockDelta": {"delta": {"text": "said, then thought"}}},
                {"contentBlockDelta": {"delta": {"reasoningContent": {"text": "hmm"}}}},
                {"contentBlockDelta": {"delta": {"reasoningContent": {"redactedContent": b"x"}}}},
                {"contentBlockStop": {}},
            ],
            id="text-reasoning-redacted-in-one-block",
        ),
        pytest.param(
            [
                {"contentBlockStart": {"start": {"toolUse": {"toolUseId": "t1", "name": "add"}}}},
                {"contentBlockDelta": {"delta": {"toolUse": {"input": "{not json"}}}},
                {"contentBlockStop": {}},
                {"contentBlockStart": {"start": {}}},
                {"contentBlockDelta": {"delta": {"toolUse": {"input": "{}", "name": "no_id"}}}},
                {"contentBlockStop": {}},
                {"contentBlockDelta": {"delta": {"toolUse": {"input": "{}", "toolUseId": "t3", "name": "late"}}}},
                {"contentBlockStop": {}},
                {"messageStop": {"stopReason": "end_turn"}},
            ],
            id="bad-json-missing-id-ids-in-delta",
        ),
    ],
)
def test_the_adapted_stream_folds_into_the_message_strands_folds(events: list[dict[str, Any]]) -> None:
    model = script_model_class(FacadeModel)([events])
    assert folded(collect(model)) == strands_folded(events)


def test_the_model_gets_strands_arguments_and_normalised_messages(caplog: pytest.LogCaptureFixture) -> None:
    model = script_model_class(FacadeModel)([text_turn("ok", (1, 1))])
    messages = [
        {"role": "user", "content": [{"image": {"format": "png", "source": {"bytes": {"$b64": "AAE="}}}}]},
        {"role": "assistant", "content": []},
        {"role": "user", "content": [{"text": "and?"}]},
        {"role": "assistant", "content": [{"text": "  "}, {"toolUse": {"toolUseId": "t", "name": "bad name!", "input": {}}}]},
        {"role": "user", "content": [{"toolResult": {"toolUseId": "t", "status": "success", "content": [{"text": "r"}]}}]},
    ]
    spec = {"name": "add", "description": "d", "inputSchema": {"json": {"type": "object"}}}
    collect(
        model,
        messages=messages,
        system_prompt=[{"text": "a"}, {"cachePoint": {"type": "default"}}, {"text": "b"}],
        tool_specs=[spec],
        tool_choice={"any": {}},
    )
    call = model.calls[0]
    assert call["system_prompt"] == "a\nb"
    assert call["system_prompt_content"] == [{"text": "a"}, {"cachePoint": {"type": "default"}}, {"text": "b"}]
    assert call["tool_choice"] == {"any": {}} and call["tools"] == ["add"]
    assert call["messages"][0]["content"][0]["image"]["source"]["bytes"] == b"\x00\x01"
    assert call["messages"][1]["content"] == [{"text": "[blank text]"}]
    assert call["messages"][3]["content"] == [{"toolUse": {"toolUseId": "t", "name": "INVALID_TOOL_NAME", "input": {}}}]
    assert messages[3]["content"][1]["toolUse"]["name"] == "bad name!"  # the run's own messages are untouched
    assert strands_messages(messages) == call["messages"]


def test_without_tools_the_model_gets_none_and_the_invocation_state_the_facade_set() -> None:
    seen: list[Any] = []

    class Probe(FacadeModel):
        def update_config(self, **model_config: Any) -> None: ...

        def get_config(self) -> Any:
            return None

        async def structured_output(self, *args: Any, **kwargs: Any) -> Any:
            yield {}

        async def stream(self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any) -> Any:
            seen.append((tool_specs, system_prompt, kwargs["invocation_state"], kwargs["model_state"]))
            kwargs["model_state"]["response_id"] = "r1"  # a stateful model writes its state here
            for event in text_turn("ok", (1, 1)):
                yield event

    token = INVOCATION_STATE.set({"user_id": "u7"})
    try:
        events = collect(Probe(), model_state={"before": 1})
    finally:
        INVOCATION_STATE.reset(token)
    assert seen == [(None, None, {"user_id": "u7"}, {"before": 1, "response_id": "r1"})]
    assert events[-1] == {"modelState": {"before": 1, "response_id": "r1"}}
    assert CustomModel(Probe()).get_config() == {} and CustomModel(Probe()).model_id == "strands:Probe"
    collect(Probe())
    assert seen[-1][2] == {}


def test_a_model_yielding_garbage_is_a_model_response_error_naming_it() -> None:
    model = script_model_class(FacadeModel)([["not an event"]])
    with pytest.raises(ModelResponseError, match=r"ScriptModel.stream\(\) yielded str"):
        collect(model)
    model = script_model_class(FacadeModel)([[{"contentBlockDelta": {}}]])
    with pytest.raises(ModelResponseError, match="malformed contentBlockDelta"):
        collect(model)


def test_to_tether_model_takes_models_of_either_base_and_keeps_tether_models() -> None:
    facade = script_model_class(FacadeModel)([])
    real = script_model_class(StrandsModel)([])
    adapted = to_tether_model(facade)
    assert isinstance(adapted, CustomModel) and strands_model_of(adapted) is facade
    assert adapted.model_id == "strands:ScriptModel:script-1"
    assert isinstance(to_tether_model(real), CustomModel)
    scripted = tether.ScriptedModel(["x"])
    assert to_tether_model(scripted) is scripted and strands_model_of(scripted) is scripted


def test_the_events_of_an_early_stopped_stream_close_the_models_generator() -> None:
    closed: list[bool] = []

    class Endless(FacadeModel):
        def update_config(self, **model_config: Any) -> None: ...

        def get_config(self) -> Any:
            return {}

        async def structured_output(self, *args: Any, **kwargs: Any) -> Any:
            yield {}

        async def stream(self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any) -> Any:
            try:
                while True:
                    yield {"contentBlockDelta": {"delta": {"text": "x"}}}
            finally:
                closed.append(True)

    async def first() -> Any:
        stream = CustomModel(Endless()).stream(
            {"messages": [], "system_prompt": None, "tool_specs": [], "tool_choice": None, "model_state": {}}
        )
        event = await stream.__anext__()
        await stream.aclose()  # type: ignore[attr-defined]
        return event

    assert asyncio.run(first()) == {"contentBlockDelta": {"delta": {"text": "x"}}}
    assert closed == [True]


def test_a_stream_that_is_not_async_is_a_configuration_error() -> None:
    class Sync(FacadeModel):
        def update_config(self, **model_config: Any) -> None: ...

        def get_config(self) -> Any:
            return {}

        async def structured_output(self, *args: Any, **kwargs: Any) -> Any:
            yield {}

        def stream(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
            return [{"messageStop": {"stopReason": "end_turn"}}]

    with pytest.raises(tether.errors.ConfigurationError, match=r"Sync.stream\(\) returned list"):
        collect(Sync())


def test_a_throttling_error_raised_by_the_stream_call_itself_is_mapped_too() -> None:
    class Eager(FacadeModel):
        def update_config(self, **model_config: Any) -> None: ...

        def get_config(self) -> Any:
            return {}

        async def structured_output(self, *args: Any, **kwargs: Any) -> Any:
            yield {}

        def stream(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
            raise ModelThrottledException("refused before streaming")

    with pytest.raises(ModelThrottledError, match="refused before streaming"):
        collect(Eager())
