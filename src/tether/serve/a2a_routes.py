"""The A2A v1.0 endpoint of ``tether serve``: each served agent is an A2A agent whose tasks are durable runs.

- ``GET /agents/{name}/a2a/.well-known/agent-card.json``: the agent's card; its JSON-RPC
  interface is ``POST /agents/{name}/a2a`` (so ``a2a-sdk``'s client finds it from the URL
  ``/agents/{name}/a2a``).
- ``POST /agents/{name}/a2a``: A2A JSON-RPC 2.0: ``SendMessage``, ``SendStreamingMessage``,
  ``GetTask``, ``CancelTask``, ``SubscribeToTask``.

The protocol side (JSON-RPC framing, method names, the ``A2A-Version`` check, parsing into the
protocol's types, SSE, the protocol's error codes) is the official ``a2a-sdk``'s
:class:`~a2a.server.routes.jsonrpc_dispatcher.JsonRpcDispatcher`; behind it,
:class:`TetherRequestHandler` implements the SDK's ``RequestHandler`` interface over the
server's :class:`~tether.serve.runs.RunManager` and the one committed-event source
(:func:`~tether.serve.stream.run_events`), encoded by :mod:`tether.serve.a2a`. No A2A task
store: the run store is the truth, so a task outlives its server, and a second server on the
store answers for it.

A message's meaning:

- with ``taskId`` of a run waiting for answers (``input-required``): it answers the run's
  interrupts (:func:`~tether.serve.a2a.answers_of`), and the run goes on;
- with ``contextId`` and no ``taskId``: a new turn of that run (a new run when there is none
  with that id): the context is the conversation;
- with neither: a new run, its id derived from the message id.

The message id is the request's idempotency key (:mod:`tether.serve.idempotency`, namespace
``a2a:``): a message sent again (a retry) starts nothing and gets the first one's task; the same
id with other content is refused. ``SubscribeToTask`` sends the task as stored, then every
event after it: after a server is killed, a subscription to another server on the store goes on
exactly where the task it sends ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from importlib import metadata
from typing import Any

from a2a.server.context import ServerCallContext
from a2a.server.request_handlers.request_handler import RequestHandler
from a2a.server.request_handlers.response_helpers import agent_card_to_dict, build_error_response
from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher
from a2a.types import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    InvalidParamsError,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    PushNotificationNotSupportedError,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskNotCancelableError,
    TaskNotFoundError,
    TaskPushNotificationConfig,
    TaskState,
    UnsupportedOperationError,
)
from a2a.utils.errors import A2AError, ContentTypeNotSupportedError
from google.protobuf import json_format
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from ..durable.history import summary_of
from ..durable.store import with_liveness
from ..errors import RequestError
from .a2a import TERMINAL, StreamEvent, TaskFold, agent_card, answers_of, prompt_of
from .bodies import read_json, run_id_of
from .events import Cursor, interrupts_of
from .idempotency import RequestKey, digest, key_from, recorded, run_id_for
from .registry import entry_of
from .runs import RunManager
from .stream import run_events

A2A_KEYS = "a2a:"
"""The namespace of A2A keys in a run's records: a message's id is its key."""


class TetherRequestHandler(RequestHandler):
    """The ``a2a-sdk`` request handler of one served agent, backed by Tether runs (module docstring).

    Args:
        manager: The server's runs.
        name: The served agent.
        poll_interval: Seconds between two reads of the store for a run another process executes.
    """

    def __init__(self, manager: RunManager, name: str, *, poll_interval: float) -> None:
        self.runs = manager
        self.name = name
        self.poll_interval = poll_interval

    # -- messages ------------------------------------------------------------------------------

    async def on_message_send(self, params: SendMessageRequest, context: ServerCallContext) -> Task | Message:
        """``SendMessage``: start (or answer) the task; with ``returnImmediately`` return it at once,
        else once the turn ends or waits for input."""
        with _a2a_errors():
            run_id, after = await self._send(params.message)
            fold = await self._fold(run_id, after)
            fold.restart()
            if params.configuration.return_immediately:
                return fold.task(history_length=_history_length(params))
            async for event in self._events(run_id, after):
                fold.feed(event)
                if fold.resting:
                    break
            return fold.task(history_length=_history_length(params))

    async def on_message_send_stream(self, params: SendMessageRequest, context: ServerCallContext) -> AsyncGenerator[StreamEvent]:
        """``SendStreamingMessage``: the task, then its updates until the turn ends or waits for input."""
        with _a2a_errors():
            run_id, after = await self._send(params.message)
            fold = await self._fold(run_id, after)
            fold.restart()
        yield fold.task(history_length=_history_length(params))
        async for update in self._updates(fold, Cursor(after)):
            yield update

    async def on_subscribe_to_task(self, params: SubscribeToTaskRequest, context: ServerCallContext) -> AsyncGenerator[StreamEvent]:
        """``SubscribeToTask``: the task as stored, then every update after it (nothing missing,
        nothing repeated), until it ends or waits for input; a task that ended is refused."""
        with _a2a_errors():
            run_id = await self._task_id(params.id)
            fold = await self._fold(run_id, None)
            if fold.state in TERMINAL:
                raise UnsupportedOperationError(message=f"task {run_id!r} is in a terminal state; read it with GetTask")
        yield fold.task()
        async for update in self._updates(fold, Cursor.parse(fold.cursor)):
            yield update

    # -- tasks ---------------------------------------------------------------------------------

    async def on_get_task(self, params: GetTaskRequest, context: ServerCallContext) -> Task | None:
        """``GetTask``: the fold of the run's committed events."""
        with _a2a_errors():
            run_id = await self._task_id(params.id)
            fold = await self._fold(run_id, None)
            return fold.task(history_length=params.history_length if params.HasField("history_length") else None)

    async def on_cancel_task(self, params: CancelTaskRequest, context: ServerCallContext) -> Task | None:
        """``CancelTask``: a run executing in this server is asked to stop at its next step (a
        tool call under way finishes first); the task is returned at once, still ``working``
        with a note, and its stream (or ``GetTask``) shows ``canceled`` once the turn ended."""
        with _a2a_errors():
            run_id = await self._task_id(params.id)
            fold = await self._fold(run_id, None)
            if fold.resting or (not self.runs.executing(run_id) and not await asyncio.to_thread(self.runs.store.owner_alive, run_id)):
                raise TaskNotCancelableError(message=f"task {run_id!r} is not working (it is {_state_name(fold)})")
            if not self.runs.executing(run_id):
                raise TaskNotCancelableError(message=f"task {run_id!r} is executing in another server process; cancel it there")
            self.runs.cancel(run_id)
            return fold.cancelling()

    async def on_list_tasks(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        raise UnsupportedOperationError(message="ListTasks is not supported: list runs with GET /runs")

    async def on_create_task_push_notification_config(
        self, params: TaskPushNotificationConfig, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        raise PushNotificationNotSupportedError

    async def on_get_task_push_notification_config(
        self, params: GetTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        raise PushNotificationNotSupportedError

    async def on_list_task_push_notification_configs(
        self, params: ListTaskPushNotificationConfigsRequest, context: ServerCallContext
    ) -> ListTaskPushNotificationConfigsResponse:
        raise PushNotificationNotSupportedError

    async def on_delete_task_push_notification_config(
        self, params: DeleteTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> None:
        raise PushNotificationNotSupportedError

    async def on_get_extended_agent_card(self, params: GetExtendedAgentCardRequest, context: ServerCallContext) -> AgentCard:
        raise UnsupportedOperationError(message="this agent has no extended card")

    # -- helpers -------------------------------------------------------------------------------

    async def _send(self, message: Message) -> tuple[str, int]:
        """Carry out one message (module docstring); returns its run and the step count its
        stream starts after (the first request's, for a repeat)."""
        key = key_from(message.message_id or None, A2A_KEYS)
        if key is None:
            raise RequestError("message.messageId is missing: every A2A message has an id")
        if message.task_id:
            run_id = await self._task_id(message.task_id)
        elif message.context_id:
            run_id = _run_id(message.context_id, "message.contextId")
        else:
            run_id = run_id_for(key)
        head = await asyncio.to_thread(self.runs.store.head, run_id)
        after = int(head.get("steps") or 0) if head is not None else 0
        parts = [json_format.MessageToDict(part) for part in message.parts]
        asked = {"agent": self.name, "task": message.task_id, "context": message.context_id, "parts": parts}
        request = RequestKey(key, digest(asked), after, explicit=False)
        if message.task_id:
            assert head is not None
            status = summary_of(run_id, head).status
            pending = {item["id"]: item for item in interrupts_of(head)}
            responses = None  # a repeat of an answer the run recorded is answered from its record
            if recorded(head, key) is None:
                if status != "interrupted" or not pending:
                    raise UnsupportedOperationError(
                        message=f"task {run_id!r} is {status} and waits for no input; send the next turn in its context "
                        "(contextId, without taskId)"
                    )
                responses = answers_of(message, pending)
            first = await self.runs.answer(run_id, responses, request)
        else:
            first = await self.runs.start_run(self.name, prompt_of(message), run_id, request)
        return run_id, int(first.get("after") or 0) if first is not None else after

    async def _task_id(self, value: str) -> str:
        """The run a task id names, when it is a run of this agent (TaskNotFoundError otherwise)."""
        run_id = _run_id(value, "id")
        head = await asyncio.to_thread(self.runs.store.head, run_id)
        if head is None:
            if self.runs.executing(run_id):
                return run_id
            raise TaskNotFoundError(message=f"no task {run_id!r}")
        if await asyncio.to_thread(entry_of, self.runs.registry, head) != self.name:
            raise TaskNotFoundError(message=f"task {run_id!r} is not a task of agent {self.name!r}")
        return run_id

    async def _fold(self, run_id: str, upto: int | Cursor | None) -> TaskFold:
        """The task from the run's committed events (those of its first ``upto`` steps, or all)."""
        limit = Cursor(upto) if isinstance(upto, int) else upto
        fold = TaskFold(run_id)
        with self.runs.logs.open(run_id) as log:
            await log.refresh(lambda: self.runs.generation(run_id))
            if log.missing and not self.runs.executing(run_id):
                raise TaskNotFoundError(message=f"no task {run_id!r}")
            for event in log.events:
                if limit is None or not limit.admits(event["id"]):
                    fold.feed(event)
        if upto is None and fold.state not in TERMINAL:
            head = await asyncio.to_thread(self.runs.store.head, run_id)
            if head is not None:  # a run at rest as stored may be one a dead server left: it is still working
                (summary,) = await asyncio.to_thread(with_liveness, [summary_of(run_id, head)], self.runs.store.owner_alive)
                if summary.status in ("stalled", "stopped"):
                    fold.feed({"type": "status", "data": {"status": "running"}})
        return fold

    async def _events(self, run_id: str, after: int | Cursor) -> AsyncIterator[Any]:
        cursor = Cursor(after) if isinstance(after, int) else after
        source = run_events(self.runs, run_id, cursor, poll_interval=self.poll_interval, keepalive=3600.0)
        try:
            async for event in source:
                if event is not None:
                    yield event
        finally:
            await source.aclose()  # type: ignore[attr-defined]

    async def _updates(self, fold: TaskFold, after: Cursor) -> AsyncIterator[StreamEvent]:
        """The stream events of the run's events after ``after``, until the task rests."""
        try:
            async for event in self._events(fold.run_id, after):
                for update in fold.feed(event):
                    yield update
                if fold.resting or event.get("type") == "end":
                    return
        except RequestError as exc:
            raise _a2a_error(exc) from None


class A2AEndpoint:
    """The A2A routes over a server's :class:`~tether.serve.runs.RunManager`: one ``a2a-sdk``
    JSON-RPC dispatcher per served agent.

    Args:
        manager: The server's runs.
        max_body: The largest request body accepted, in bytes.
        poll_interval: Seconds between two reads of the store for a run another process executes.
    """

    def __init__(self, manager: RunManager, *, max_body: int, poll_interval: float) -> None:
        self.runs = manager
        self.max_body = max_body
        self.dispatchers = {
            name: JsonRpcDispatcher(TetherRequestHandler(manager, name, poll_interval=poll_interval)) for name in manager.registry
        }

    def routes(self) -> list[BaseRoute]:
        """``GET /agents/{name}/a2a/.well-known/agent-card.json`` and ``POST /agents/{name}/a2a``."""
        return [
            Route("/agents/{name}/a2a/.well-known/agent-card.json", self.card, methods=["GET"]),
            Route("/agents/{name}/a2a", self.rpc, methods=["POST"]),
        ]

    async def card(self, request: Request) -> Response:
        """The agent card of ``name``, its interface URL on the host the request came to."""
        name = self._agent(request)
        factory = self.runs.registry[name]
        description = (getattr(factory, "__doc__", None) or "").strip().split("\n")[0] or f"The Tether agent {name!r}"
        card = agent_card(name, str(request.base_url), description, _version())
        return JSONResponse(agent_card_to_dict(card))

    async def rpc(self, request: Request) -> Response:
        """One JSON-RPC request, its body read under the server's limits first (413, 415, 400)."""
        dispatcher = self.dispatchers[self._agent(request)]
        body = await read_json(request, self.max_body)
        refused = _unparsable(dispatcher, body)
        if refused is not None:
            return refused
        raw = json.dumps(body).encode()
        sent = False

        async def receive() -> Any:
            nonlocal sent
            if sent:
                return await request.receive()  # after the body: the client's disconnect
            sent = True
            return {"type": "http.request", "body": raw, "more_body": False}

        return await dispatcher.handle_requests(Request(request.scope, receive))

    def _agent(self, request: Request) -> str:
        name: str = request.path_params["name"]
        if name not in self.runs.registry:
            raise RequestError(f"unknown agent {name!r}; this server has {sorted(self.runs.registry)}", status=404)
        return name


def _unparsable(dispatcher: JsonRpcDispatcher, body: dict[str, Any]) -> Response | None:
    """The JSON-RPC ``Invalid params`` answer to a request whose params are not its method's
    message (None: they are, or the dispatcher refuses the request for another reason). The
    dispatcher would answer the same, but it logs a client's mistake with a traceback."""
    model = dispatcher.METHOD_TO_MODEL.get(str(body.get("method")))
    params = body.get("params", {})
    if model is None or body.get("jsonrpc") != "2.0":
        return None
    try:
        json_format.ParseDict(params, model(), ignore_unknown_fields=True)
    except (json_format.ParseError, TypeError, ValueError, AttributeError) as exc:
        ident = body.get("id")
        ident = ident if isinstance(ident, str | int) and not isinstance(ident, bool) else None
        return JSONResponse(build_error_response(ident, InvalidParamsError(message=f"params: {str(exc)[:300]}")))
    return None


def _a2a_error(exc: RequestError) -> A2AError:
    """A Tether refusal as the A2A error that means it."""
    if exc.status == 404:
        return TaskNotFoundError(message=str(exc))
    if exc.status == 415:
        return ContentTypeNotSupportedError(message=str(exc))
    if exc.status == 409:
        return UnsupportedOperationError(message=str(exc))
    return InvalidParamsError(message=str(exc))


@contextlib.contextmanager
def _a2a_errors() -> Iterator[None]:
    try:
        yield
    except RequestError as exc:
        raise _a2a_error(exc) from None


def _run_id(value: str, field: str) -> str:
    try:
        run: str = run_id_of(value)
    except RequestError as exc:
        raise RequestError(f"{field}: {exc}") from None
    return run


def _state_name(fold: TaskFold) -> str:
    return str(TaskState.Name(fold.state)).removeprefix("TASK_STATE_").lower().replace("_", "-")


def _history_length(params: SendMessageRequest) -> int | None:
    config = params.configuration
    return config.history_length if config.HasField("history_length") else None


def _version() -> str:
    try:
        return metadata.version("tether")
    except metadata.PackageNotFoundError:
        return "0"


__all__ = ["A2A_KEYS", "A2AEndpoint", "TetherRequestHandler"]
