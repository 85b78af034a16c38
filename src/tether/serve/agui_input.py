"""The AG-UI input: a ``RunAgentInput`` mapped to what the server does.

Without ``resume`` and without results for pending client-tool calls, the last user message is
the prompt of a new turn; otherwise the input answers the thread's pending interrupts: the
``resume`` entries (by their AG-UI ids, :func:`~tether.serve.agui.interrupt_ref`) and the
``tool`` messages that carry the results of client (front-end) tools
(:mod:`tether.serve.clientturn`). Its ``tools``, ``state``, ``context`` and ``forwardedProps``
go with the turn (:func:`client_turn_of`). Fields the AG-UI models do not declare are removed,
with a warning in the log: AG-UI's rule is that a receiver ignores what it does not know.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from ag_ui.core import RunAgentInput, ToolMessage
from pydantic import BaseModel, ValidationError

from ..durable.indoubt import IN_DOUBT
from ..errors import RequestError
from .agui import CANCELLED
from .clientturn import CLIENT_TOOL, ClientTurn, client_spec

_log = logging.getLogger(__name__)


def parse_input(body: Mapping[str, Any]) -> RunAgentInput:
    """``body`` as a ``RunAgentInput``, or a RequestError naming the first field that is wrong.

    Args:
        body: The request's JSON object.
    """
    try:
        given = RunAgentInput.model_validate(body)
    except ValidationError as exc:
        errors = exc.errors()
        first = errors[0]
        where = ".".join(str(part) for part in first["loc"]) or "the body"
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise RequestError(f"not a RunAgentInput: {where}: {first['msg']}{more}") from None
    unknown = strip_unknown(given)
    if unknown:
        _log.warning("RunAgentInput of thread %r: unknown fields ignored: %s", given.thread_id, ", ".join(unknown))
    return given


def strip_unknown(model: BaseModel, path: str = "") -> list[str]:
    """Remove the fields of ``model`` (and of the models it holds) that its AG-UI model does not
    declare, and return their paths (``messages.0.foo``). The ``ag_ui`` models keep unknown
    fields; AG-UI's rule is to ignore them, so they go before anything reads the input.

    Args:
        model: A validated ``ag_ui.core`` model.
        path: Its path in the input (empty: the input itself).
    """
    found: list[str] = []
    extra = model.__pydantic_extra__
    if extra:
        found += [f"{path}{key}" for key in extra]
        extra.clear()
    for name in type(model).model_fields:
        value = getattr(model, name)
        alias = type(model).model_fields[name].alias or name
        items = value if isinstance(value, list) else [value]
        for index, item in enumerate(items):
            if isinstance(item, BaseModel):
                where = f"{path}{alias}.{index}." if isinstance(value, list) else f"{path}{alias}."
                found += strip_unknown(item, where)
    return found


def prompt_of(given: RunAgentInput) -> str | list[dict[str, Any]]:
    """The prompt of ``given``: its last user message, as text or as text content blocks
    (RequestError when there is none, it is empty, or it holds other content than text).

    Args:
        given: The client's input.
    """
    for index in range(len(given.messages) - 1, -1, -1):
        message = given.messages[index]
        if message.role != "user":
            continue
        content = message.content
        if isinstance(content, str):
            if not content.strip():
                raise RequestError(f"messages[{index}] (the last user message) is empty: it is the prompt")
            return content
        blocks: list[dict[str, Any]] = []
        for part_index, part in enumerate(content or []):
            if part.type != "text":
                raise RequestError(f"messages[{index}].content[{part_index}] is {part.type!r} content; this endpoint takes text")
            blocks.append({"text": part.text})
        if not any(block["text"].strip() for block in blocks):
            raise RequestError(f"messages[{index}] (the last user message) has no text: it is the prompt")
        return blocks
    raise RequestError("messages has no user message: the last user message is the prompt (or send resume to answer interrupts)")


def responses_of(
    given: RunAgentInput, pending: Mapping[str, Mapping[str, Any]], refs: Mapping[str, str] | None = None
) -> list[dict[str, Any]]:
    """The ``resume`` entries of ``given`` as interrupt answers (``{interruptId, response}``):
    a ``resolved`` entry answers with its payload, a ``cancelled`` one with :data:`CANCELLED`,
    but not an in-doubt question, which takes ``"rerun"`` or the result to record (a
    RequestError: cancelling it would record the marker as the call's result).

    Args:
        given: The client's input.
        pending: The run's pending interrupts by id (as :func:`~tether.serve.events.interrupts_of` lists them).
        refs: The AG-UI ids of the pending interrupts (:func:`~tether.serve.agui.interrupt_ref`)
            to their Tether ids; an entry may name either.
    """
    answers: list[dict[str, Any]] = []
    for index, entry in enumerate(given.resume or []):
        ident = (refs or {}).get(entry.interrupt_id, entry.interrupt_id)
        if entry.status == "resolved":
            answers.append({"interruptId": ident, "response": entry.payload})
            continue
        if (pending.get(ident) or {}).get("name") == IN_DOUBT:
            raise RequestError(
                f"resume[{index}]: in-doubt call {entry.interrupt_id!r} cannot be cancelled; "
                "resolve it with payload 'rerun' or the result to record"
            )
        answers.append({"interruptId": ident, "response": dict(CANCELLED)})
    return answers


def tool_answers(given: RunAgentInput, pending: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The ``tool`` messages of ``given`` that carry the results of pending client-tool calls
    (:mod:`tether.serve.clientturn`), as the answers to their interrupts (the last message for
    a call wins). Tool messages of calls that wait for nothing (earlier turns, which a client
    sends again with the thread) are not answers.

    Args:
        given: The client's input.
        pending: The run's pending interrupts by id.
    """
    calls = {item["tool_use_id"]: ident for ident, item in pending.items() if item.get("name") == CLIENT_TOOL}
    answers: dict[str, Any] = {}
    for message in given.messages:
        if isinstance(message, ToolMessage) and message.tool_call_id in calls:
            answers[calls[message.tool_call_id]] = message.content if message.error is None else {"error": message.error}
    return [{"interruptId": ident, "response": response} for ident, response in answers.items()]


def client_turn_of(given: RunAgentInput, *, new_turn: bool) -> ClientTurn:
    """What ``given`` brings to its turn besides the prompt: its ``tools`` as client tools (a new
    turn's; a resume goes on with the tools it was interrupted with), its ``state`` merged into
    the agent state, and its ``context`` and ``forwardedProps`` recorded with the turn (in
    ``tether.serve`` → ``agui``). A RequestError names what is wrong.

    Args:
        given: The client's input.
        new_turn: Whether the input starts a new turn (a prompt), not a resume.
    """
    tools = None
    if new_turn:
        tools = [client_spec(tool.name, tool.description, tool.parameters, f"tools[{i}]") for i, tool in enumerate(given.tools or [])]
        names = [spec["name"] for spec in tools]
        if len(set(names)) != len(names):
            raise RequestError(f"tools: a name is declared twice: {sorted(n for n in set(names) if names.count(n) > 1)}")
    state = given.state
    if state is None:
        state = {}
    if not isinstance(state, dict):
        raise RequestError(f"state must be a JSON object (merged into the agent state), got {type(state).__name__}")
    context = [item.model_dump(mode="json", by_alias=True) for item in given.context or []]
    turn = ClientTurn(tools, dict(state), {"agui": {"context": context, "forwardedProps": given.forwarded_props}})
    turn.check()
    return turn


__all__ = ["client_turn_of", "parse_input", "prompt_of", "responses_of", "strip_unknown", "tool_answers"]
