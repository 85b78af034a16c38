"""LlamaCppModel with the real SmolLM2-135M-Instruct GGUF, in-process, greedy decoding.

The agent tests assert structure only (which tool was called, that its arguments were valid —
the tool ran without error — and that the loop ended), never the model's prose.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Iterator
from typing import Any

import pytest

from tether import Agent, tool
from tether.errors import ConfigurationError, ContextWindowOverflowError, ModelResponseError
from tether.loop.stream import StreamAccumulator
from tether.models.llamacpp import format_chat

from .conftest import fold, request, require, smollm2_path

_OPS: dict[type, Any] = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


def _evaluate(node: ast.AST) -> float:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return float(_OPS[type(node.op)](_evaluate(node.left), _evaluate(node.right)))
    raise ValueError(f"not an arithmetic expression: {ast.dump(node)}")


@tool
def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression.

    Args:
        expression: The expression, e.g. "2 * (3 + 4)".
    """
    return f"{_evaluate(ast.parse(expression.strip(), mode='eval')):g}"


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first addend.
        b: The second addend.
    """
    return a + b


@pytest.fixture(scope="module")
def model() -> Iterator[Any]:
    require("llama_cpp", "pip install llama-cpp-python")
    from tether.models import LlamaCppModel

    yield LlamaCppModel(smollm2_path())


@pytest.mark.parametrize(
    ("prompt", "expected_tool"),
    [("What is 12 * 34 + 5? Use the calculator.", "calculator"), ("Add 7 and 5.", "add")],
)
async def test_agent_calls_the_right_tool_and_the_loop_ends(model: Any, prompt: str, expected_tool: str) -> None:
    agent = Agent(model=model, tools=[calculator, add])
    result = await agent.invoke_async(prompt)
    assert result.stop_reason == "end_turn"
    user, call, results, answer = agent.run_state.messages  # one tool round, then the answer
    assert user["role"] == "user" and call["role"] == "assistant" and answer["role"] == "assistant"
    (use_block,) = call["content"]
    use = use_block["toolUse"]
    assert use["name"] == expected_tool
    (result_block,) = results["content"]
    assert result_block["toolResult"]["toolUseId"] == use["toolUseId"]
    assert result_block["toolResult"]["status"] == "success", result_block  # the arguments were valid
    assert [list(block) for block in answer["content"]] == [["text"]]


def test_after_the_tool_rounds_only_an_answer_is_allowed(model: Any) -> None:
    specs = Agent(tools=[calculator, add]).tool_specs_for(None)
    prompt = {"role": "user", "content": [{"text": "Add 7 and 5."}]}
    first = model.output_schema(request([prompt], tool_specs=specs))
    assert [alt["properties"]["tool"]["const"] for alt in first["oneOf"]] == ["calculator", "add", "final_answer"]
    round_done = [
        prompt,
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "add", "input": {"a": 7, "b": 5}}}]},
        {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "status": "success", "content": [{"json": 12}]}}]},
    ]
    after = model.output_schema(request(round_done, tool_specs=specs))
    assert after["properties"]["tool"] == {"const": "final_answer"}
    forced = model.output_schema(request([prompt], tool_specs=specs, tool_choice={"tool": {"name": "add"}}))
    assert forced["properties"]["tool"] == {"const": "add"}
    assert model.output_schema(request([prompt])) is None


async def test_forced_tool_choice_produces_a_valid_call(model: Any) -> None:
    specs = Agent(tools=[calculator, add]).tool_specs_for(None)
    req = request([{"role": "user", "content": [{"text": "Add 7 and 5."}]}], tool_specs=specs, tool_choice={"tool": {"name": "add"}})
    acc = await fold(model, req)
    (block,) = acc.message()["content"]
    assert block["toolUse"]["name"] == "add"
    assert set(block["toolUse"]["input"]) == {"a", "b"} and all(isinstance(v, int) for v in block["toolUse"]["input"].values())
    assert acc.stop_reason == "tool_use"
    assert acc.usage["inputTokens"] > 0 and acc.usage["outputTokens"] > 0


async def test_without_tools_it_generates_free_text(model: Any) -> None:
    model_text = await fold(model, request([{"role": "user", "content": [{"text": "Say hello."}]}]))
    (block,) = model_text.message()["content"]
    assert isinstance(block["text"], str) and block["text"]
    assert model_text.stop_reason in ("end_turn", "max_tokens")


async def test_truncated_json_is_a_clear_response_error() -> None:
    require("llama_cpp", "pip install llama-cpp-python")
    from tether.models import LlamaCppModel

    tiny = LlamaCppModel(smollm2_path(), max_tokens=3)
    specs = Agent(tools=[add]).tool_specs_for(None)
    with pytest.raises(ModelResponseError, match="max_tokens=3"):
        await fold(tiny, request([{"role": "user", "content": [{"text": "Add 7 and 5."}]}], tool_specs=specs))


async def test_prompt_longer_than_the_context_is_overflow() -> None:
    require("llama_cpp", "pip install llama-cpp-python")
    from tether.models import LlamaCppModel

    small = LlamaCppModel(smollm2_path(), n_ctx=64)
    with pytest.raises(ContextWindowOverflowError, match="n_ctx=64"):
        await fold(small, request([{"role": "user", "content": [{"text": "word " * 200}]}]))


def test_missing_model_file_is_a_configuration_error(tmp_path: Any) -> None:
    from tether.models import LlamaCppModel

    with pytest.raises(ConfigurationError, match="model_path"):
        LlamaCppModel(tmp_path / "missing.gguf")


def test_config_and_id(model: Any) -> None:
    assert model.model_id == "llamacpp:SmolLM2-135M-Instruct.Q4_1"
    config = model.get_config()
    assert config["provider"] == "llamacpp" and config["temperature"] == 0.0 and config["seed"] == 0


def test_reserved_or_unknown_tool_names_are_configuration_errors(model: Any) -> None:
    spec: Any = {"name": "final_answer", "description": "x", "inputSchema": {"json": {"type": "object", "properties": {}}}}
    prompt: Any = {"role": "user", "content": [{"text": "hi"}]}
    with pytest.raises(ConfigurationError, match="final_answer"):
        model.output_schema(request([prompt], tool_specs=[spec]))
    specs = Agent(tools=[add]).tool_specs_for(None)
    with pytest.raises(ConfigurationError, match="tool_choice names tool 'nope'"):
        model.output_schema(request([prompt], tool_specs=specs, tool_choice={"tool": {"name": "nope"}}))


# -- streaming -------------------------------------------------------------------------------


def _short(**kwargs: Any) -> Any:
    require("llama_cpp", "pip install llama-cpp-python")
    from tether.models import LlamaCppModel

    return LlamaCppModel(smollm2_path(), **kwargs)


@pytest.mark.parametrize(("prompt", "max_tokens", "finish"), [("Say hello.", 8, "length"), ("Reply with one word: yes or no?", 64, "stop")])
async def test_free_text_streams_token_by_token_with_the_usage_of_a_plain_call(prompt: str, max_tokens: int, finish: str) -> None:
    small = _short(max_tokens=max_tokens)
    req = request([{"role": "user", "content": [{"text": prompt}]}])
    events = [event async for event in small.stream(req)]
    deltas = [e["contentBlockDelta"]["delta"]["text"] for e in events if "contentBlockDelta" in e]
    assert len(deltas) > 1  # several pieces, not one block at the end
    acc = StreamAccumulator()
    for event in events:
        acc.add(event)
    assert acc.message()["content"] == [{"text": "".join(deltas)}]
    # the same generation without streaming reports the same token counts
    plain = small._load().create_chat_completion(messages=format_chat(req), temperature=0.0, seed=0, max_tokens=max_tokens)
    assert plain["choices"][0]["finish_reason"] == finish  # both ways a generation can end
    assert acc.stop_reason == ("max_tokens" if finish == "length" else "end_turn")
    assert acc.usage["inputTokens"] == plain["usage"]["prompt_tokens"]
    assert acc.usage["outputTokens"] == plain["usage"]["completion_tokens"]
    assert "".join(deltas) == plain["choices"][0]["message"]["content"]


async def test_a_final_answer_streams_its_text_before_the_reply_is_complete() -> None:
    small = _short(max_tokens=40, max_tool_rounds=0)  # with no tool rounds left, only an answer is allowed
    specs = Agent(tools=[add]).tool_specs_for(None)
    events = [event async for event in small.stream(request([{"role": "user", "content": [{"text": "Say hi."}]}], tool_specs=specs))]
    kinds = [next(iter(e)) for e in events]
    deltas = [e["contentBlockDelta"]["delta"]["text"] for e in events if "contentBlockDelta" in e]
    assert len(deltas) > 1 and kinds.index("contentBlockDelta") < kinds.index("messageStop")
    acc = StreamAccumulator()
    for event in events:
        acc.add(event)
    assert acc.stop_reason == "end_turn"
    assert acc.message()["content"] == [{"text": "".join(deltas)}]
    assert not any(ch in "".join(deltas) for ch in '{}"')  # the answer's text, not the JSON around it


async def test_agent_stream_async_yields_the_local_models_text_deltas() -> None:
    agent = Agent(model=_short(max_tokens=6))
    deltas = [event["text"] async for event in agent.stream_async("Say hello.") if event["type"] == "text_delta"]
    assert len(deltas) > 1
    assert "".join(deltas) == str(agent.messages[-1]["content"][0]["text"])


async def test_a_caller_that_stops_early_stops_the_generation() -> None:
    small = _short(max_tokens=64)
    req = request([{"role": "user", "content": [{"text": "Count from one to fifty."}]}])
    stream = small.stream(req)
    async for event in stream:
        if "contentBlockDelta" in event:
            break
    await stream.aclose()  # type: ignore[attr-defined]
    acc = await fold(small, request([{"role": "user", "content": [{"text": "Hi."}]}]))
    assert acc.message()["content"]  # the model (and its lock) is free for the next call


@pytest.mark.parametrize(
    ("pieces", "streamed"),
    [
        (['{"tool": "final', '_answer", "ans', 'wer": "4', "13 is", ' the answer"}'], ["4", "13 is", " the answer"]),
        (['{"tool":"final_answer","answer":"a\\', "nb\\u00", 'e9c"}'], ["a", "\nb", "\u00e9c"]),
        (['{"tool": "add", "arguments": {"a": 1, "b": 2}}'], []),
    ],
)
def test_answer_text_decodes_the_answer_string_as_it_streams(pieces: list[str], streamed: list[str]) -> None:
    from tether.models.llamacpp import _AnswerText

    answer = _AnswerText()
    assert [out for piece in pieces if (out := answer.feed(piece))] == streamed
    assert answer.text == "".join(streamed)


def test_a_reply_nested_1000_deep_is_a_response_error() -> None:
    """The grammar keeps replies shallow in practice; a deep one is still a ModelResponseError."""
    from tether.models.llamacpp import _parse_reply

    with pytest.raises(ModelResponseError, match=r"invalid JSON despite the grammar \(nested more than 512 levels deep\)"):
        _parse_reply('{"tool": "x", "arguments": {"a": ' + "[" * 1_000 + "]" * 1_000 + "}}", "stop", 100)
