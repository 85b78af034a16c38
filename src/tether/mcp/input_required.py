"""MCP multi-round-trip results as durable interrupts (the 2026-07-28 revision of MCP).

A server may answer ``tools/call`` with an ``InputRequiredResult``: questions (``inputRequests``,
keyed by the server: elicitations, sampling or roots requests) and an opaque ``requestState``; the
client retries the call with the answers and the state echoed. Tether makes each question an
interrupt of the tool call, so the run stops, and any process answers it later, after any restart
(``agent.resume(run_id, responses)``, ``tether resume``, a served endpoint).

What the call must remember lives in the run, as JSON, in the agent state under
``state["tether.mcp"]["calls"][toolUseId]`` (:data:`STATE_KEY`): the server and tool, the round
(1, 2, ...), the ``requestState`` and the questions (``requests``, each the server's request as
JSON). It is written with the stop and removed in the step that records the call's result.

Each question is asked as the interrupt ``"<tool>/<key>"`` (``"<tool>/<key>#<round>"`` from the
second round on) whose reason is the question: ``{"server", "tool", "input": key, "method", ...}``
plus the request's params (for an elicitation: ``message``, ``requestedSchema``, ``mode``). They
are asked one at a time (an interrupt per question, the first unanswered one stops the run), and
once all are answered the call is retried, once, with the answers and the stored state: the
round is marked ``sent`` and the run saved before the retry goes out, so a process that dies
before its result is recorded leaves the retry *in doubt* (the agent's ``reconcile``, or the
call's ``tether.in_doubt`` interrupt: ``"rerun"`` sends it again, or the result to record). An
elicitation is answered with an ``ElicitResult`` (``{"action": "accept", "content": {...}}``), or
just the content object (accepted), or ``"decline"`` / ``"cancel"``, or a bare value when the
form has one field; a sampling or roots question with its result object.

A retry the server refuses (a JSON-RPC error: say, a state whose signature it no longer accepts)
and a stored round that is not of the shape above stop the turn with a
:class:`~tether.errors.HandleRejectedError` naming the run, the call and the field; the run keeps
the round and the answers. Needs ``protocol="auto"`` on the server (the 2026-07-28 revision).
"""

from __future__ import annotations

import asyncio
from typing import Any, Protocol, cast

from .._json import json_copy
from ..errors import HandleRejectedError
from ..interrupts import Interrupt, interrupt_id
from ..tools.base import error_result
from ..tools.context import ToolContext
from ..types import ToolResult, ToolUse
from .calls import STATE_KEY, calls_of, decide_in_doubt, drop_later, field_of, keep
from .errors import RetryRefused
from .tasks import await_task, is_task


class Sender(Protocol):
    """What a call needs of its MCP source (:class:`~tether.mcp.MCPSource`)."""

    @property
    def source_name(self) -> str: ...

    def server_tool_name(self, name: str) -> str: ...

    async def send(self, tool_use: ToolUse, key: str, retry: tuple[dict[str, Any], str | None] | None = None) -> Any: ...

    async def task_request(self, method: str, task_id: str) -> dict[str, Any]: ...

    def _tool_result(self, tool_use_id: str, result: Any) -> ToolResult: ...


MAX_ROUNDS = 10
"""Rounds of one call (as the SDK's own driver); more is an error result."""

_STATE_ONLY_DELAYS = (0.05, 0.1, 0.2, 0.25)
"""Seconds before retrying a round that carries only ``requestState`` (no questions)."""


async def call_with_rounds(source: Sender, tool_use: ToolUse, context: ToolContext) -> ToolResult:
    """Call ``tool_use`` on ``source``, asking the server's questions as interrupts of the call
    and retrying it with the answers (see the module docstring)."""
    tool_use_id = tool_use["toolUseId"]
    entry = calls_of(context).get(tool_use_id)
    retry = None
    if isinstance(entry, dict) and "task" in entry:  # a task the call started: wait for it, never call again
        done = await await_task(source, context, entry)
        if done is not None:
            return done
        entry = None  # the task was lost and the answer was "rerun": the call is made again
    if entry is not None:
        _check(entry, context)
        answers = _answers(entry, context)
        if isinstance(answers, str):
            drop_later(context)
            return error_result(tool_use_id, answers)
        retry = (answers, entry["requestState"])
        if entry.get("sent"):  # a retry with these answers was in flight when the process died
            question = (
                "this call's retry with the answers was sent but its result was not recorded; answer 'rerun' to send it "
                "again (same answers, requestState and idempotency key) or the result to record"
            )
            decided = await decide_in_doubt(context, {"server": entry.get("server"), "round": entry.get("round")}, question)
            if decided is not None:
                return decided
        entry["sent"] = True  # stored before the retry goes out: a crash from here on leaves it in doubt
        await context.save()
    rounds = 0 if entry is None else int(entry["round"])
    while True:
        try:
            outcome = await source.send(tool_use, context.idempotency_key, retry)
        except RetryRefused as exc:
            if entry is not None:
                entry.pop("sent", None)  # refused: not performed (the failed turn's write stores that)
            raise _refused(context, entry, str(exc)) from None
        if isinstance(outcome, dict):
            if entry is not None:
                drop_later(context)
            return cast("ToolResult", outcome)
        if is_task(outcome):  # long-running work: its task id is stored before anything waits on it
            task = {"server": source.source_name, "tool": source.server_tool_name(tool_use["name"]), "task": outcome.task}
            keep(context, json_copy(task))
            await context.save()
            done = await await_task(source, context, calls_of(context)[tool_use_id])
            if done is not None:
                return done
            entry, retry = None, None  # lost at once, and reconciled with "rerun": the call is made again
            continue
        rounds += 1
        if rounds > MAX_ROUNDS:
            drop_later(context)
            return error_result(tool_use_id, f"Error: MCP server {source.source_name!r} asked for input more than {MAX_ROUNDS} times")
        requests = {key: _json(request) for key, request in (outcome.input_requests or {}).items()}
        entry = {
            "server": source.source_name,
            "tool": source.server_tool_name(tool_use["name"]),
            "round": rounds,
            "requestState": outcome.request_state,
            "requests": requests,
        }
        if not requests:  # only state: the server wants the call again (after a short wait)
            await asyncio.sleep(_STATE_ONLY_DELAYS[min(rounds, len(_STATE_ONLY_DELAYS)) - 1])
            retry = ({}, outcome.request_state)
            continue
        keep(context, entry)
        answers = _answers(entry, context)  # raises the first question's interrupt
        raise AssertionError(f"unreachable: new questions were answered already: {answers}")  # pragma: no cover


def _check(entry: Any, context: ToolContext) -> None:
    """A stored round of the right shape, or a HandleRejectedError naming the field."""
    tool_use_id = context.tool_use["toolUseId"]
    problem: tuple[str, str] | None = None
    if not isinstance(entry, dict):
        problem = ("", f"must be an object, got {type(entry).__name__}")
    elif not isinstance(entry.get("round"), int) or isinstance(entry.get("round"), bool) or entry["round"] < 1:
        problem = ("round", f"must be a positive integer, got {entry.get('round')!r}")
    elif entry.get("requestState") is not None and not isinstance(entry.get("requestState"), str):
        problem = ("requestState", f"must be a string, got {type(entry.get('requestState')).__name__}")
    elif not isinstance(entry.get("requests"), dict) or not all(
        isinstance(request, dict) and isinstance(request.get("method"), str) for request in entry["requests"].values()
    ):
        problem = ("requests", "must map each question's key to the server's request ({method, params})")
    if problem is not None:
        field = field_of(tool_use_id, *problem[:1] if problem[0] else ())
        raise HandleRejectedError(
            f"run {context.run_id!r}, tool call {tool_use_id!r}: the stored MCP round {field} {problem[1]}; nothing was sent",
            run_id=context.run_id,
            tool_use_id=tool_use_id,
            field=field,
        )


def _refused(context: ToolContext, entry: dict[str, Any] | None, detail: str) -> HandleRejectedError:
    tool_use_id = context.tool_use["toolUseId"]
    field = field_of(tool_use_id, "requestState")
    server = entry.get("server") if entry else "?"
    tool = entry.get("tool") if entry else "?"
    rounds = entry.get("round") if entry else "?"
    return HandleRejectedError(
        f"run {context.run_id!r}, tool call {tool_use_id!r} ({tool} on MCP server {server!r}): the server refused the retry with the "
        f"stored requestState of round {rounds} ({field}): {detail}. The run keeps the state and the answers; resume it once the "
        "server accepts them, or cancel the run",
        run_id=context.run_id,
        tool_use_id=tool_use_id,
        field=field,
    )


def _answers(entry: dict[str, Any], context: ToolContext) -> dict[str, Any] | str:
    """The answers to the round's questions as the SDK's input responses (the first unanswered
    question raises its interrupt), or the text of an error result for an answer of the wrong
    shape."""
    from mcp_types import CreateMessageResult, ElicitResult, ListRootsResult
    from pydantic import ValidationError

    rounds = int(entry["round"])
    tool_use_id = context.tool_use["toolUseId"]
    asked = []
    for key, request in entry["requests"].items():
        name = f"{entry.get('tool')}/{key}" + ("" if rounds == 1 else f"#{rounds}")
        params = request.get("params") if isinstance(request.get("params"), dict) else {}
        reason = {"server": entry.get("server"), "tool": entry.get("tool"), "input": key, "method": request["method"], **params}
        asked.append((key, request, params, name, json_copy(reason)))
    # Every question of the round is pending when the run stops (one interrupt each), so they can
    # be answered together; the first unanswered one raises below.
    table = context.agent.run_state.interrupt_state.setdefault("interrupts", {})
    for _, _, _, name, reason in asked:
        ident = interrupt_id("tool", tool_use_id, name)
        if ident not in table:
            table[ident] = Interrupt(ident, name, reason, "tool", tool_use_id).to_dict()
    responses: dict[str, Any] = {}
    for key, request, params, name, reason in asked:
        answer = context.interrupt(name, reason)
        method = request["method"]
        try:
            if method == "elicitation/create":
                responses[key] = ElicitResult.model_validate(_elicit_answer(answer, params))
            elif method == "sampling/createMessage":
                responses[key] = CreateMessageResult.model_validate(answer)
            elif method == "roots/list":
                responses[key] = ListRootsResult.model_validate(answer)
            else:
                return f"Error: MCP server {entry.get('server')!r} asked for input of an unknown kind ({method!r})"
        except ValidationError as exc:
            return f"Error: the answer to {name!r} is not a valid answer to {method!r}: {exc.errors()[0].get('msg')}"
    return responses


def _elicit_answer(answer: Any, params: dict[str, Any]) -> Any:
    """An ``ElicitResult`` dict from an interrupt answer (see the module docstring)."""
    if isinstance(answer, dict) and answer.get("action") in ("accept", "decline", "cancel"):
        return answer
    if answer in ("decline", "cancel"):
        return {"action": answer}
    if isinstance(answer, dict):
        return {"action": "accept", "content": answer}
    schema = params.get("requestedSchema")
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if isinstance(properties, dict) and len(properties) == 1:
        return {"action": "accept", "content": {next(iter(properties)): answer}}
    return answer  # refused by the validation, naming the interrupt


def _json(request: Any) -> dict[str, Any]:
    data: dict[str, Any] = json_copy(request.model_dump(by_alias=True, mode="json", exclude_none=True))
    return data


__all__ = ["MAX_ROUNDS", "STATE_KEY", "Sender", "call_with_rounds"]
