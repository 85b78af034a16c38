"""The AG-UI endpoint of ``tether serve``: ``RunAgentInput`` in, AG-UI events out over SSE.

- ``POST /agents/{name}/agui`` with a ``RunAgentInput``: ``threadId`` is the durable run's id.
  Without ``resume`` (and without a trailing ``tool`` message), the last user message is the
  prompt of a new run (or of a new turn of the finished run ``threadId``); with ``resume``, or
  ``tool`` messages carrying client-tool results, it answers the run's pending interrupts
  (every one of them, as ``POST /runs/{id}/interrupts`` does; :mod:`tether.serve.agui_input`).
  The response streams the AG-UI run: ``RUN_STARTED``, ``MESSAGES_SNAPSHOT`` and
  ``STATE_SNAPSHOT`` of the thread so far (:mod:`tether.serve.agui_thread`), then the run's
  events to ``RUN_FINISHED`` (or ``RUN_ERROR``).
- ``GET /agents/{name}/agui/{thread_id}``: reconnect. ``Last-Event-ID`` (or ``?after=``) is the
  last SSE id received; the stream goes on with exactly the events after it, to the end of that
  AG-UI run. Without an id it replays the thread's latest AG-UI run. ``?runId=`` names the AG-UI
  run in ``RUN_STARTED``/``RUN_FINISHED`` (default: the ``runId`` of the input that started
  it, else ``THREAD@CURSOR``). It starts with the snapshots too.

The translation is :mod:`tether.serve.agui`; the events come from the one event source
(:func:`~tether.serve.stream.run_events`) and a run is started or answered by the server's
:class:`~tether.serve.runs.RunManager`, as on the JSON API. Bad input is a 4xx JSON error
before anything is stored.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from ag_ui.core import RunAgentInput, RunErrorEvent, UserMessage
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from ..errors import RequestError
from .agui import AguiTranslator, Frame, cursor_id, encode, interrupt_ref
from .agui_input import client_turn_of, parse_input, prompt_of, responses_of, tool_answers
from .agui_thread import AGUI_KEYS, read_thread
from .bodies import read_json, run_id_of
from .events import Cursor, ServeEvent, interrupts_of
from .failures import stream_error
from .idempotency import RequestKey, digest
from .registry import entry_of
from .runs import RunManager
from .stream import run_events

SSE_HEADERS = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}


class AguiEndpoint:
    """The AG-UI routes over a server's :class:`~tether.serve.runs.RunManager`.

    Args:
        manager: The server's runs.
        max_body: The largest request body accepted, in bytes.
        poll_interval: Seconds between two reads of the store for a run another process executes.
        keepalive: Seconds of silence after which the stream sends an SSE comment.
    """

    def __init__(self, manager: RunManager, *, max_body: int, poll_interval: float, keepalive: float) -> None:
        self.runs = manager
        self.max_body = max_body
        self.poll_interval = poll_interval
        self.keepalive = keepalive

    def routes(self) -> list[BaseRoute]:
        """``POST /agents/{name}/agui`` and ``GET /agents/{name}/agui/{thread_id}``."""
        return [
            Route("/agents/{name}/agui", self.run, methods=["POST"]),
            Route("/agents/{name}/agui/{thread_id}", self.reconnect, methods=["GET"]),
        ]

    async def run(self, request: Request) -> Response:
        """Start (or answer) an AG-UI run and stream it.

        Args:
            request: ``POST /agents/{name}/agui`` with a ``RunAgentInput``.
        """
        name = self._agent(request)
        given = parse_input(await read_json(request, self.max_body))
        thread_id = _thread_id(given.thread_id)
        head = await asyncio.to_thread(self.runs.store.head, thread_id)
        after = Cursor(int(head.get("steps") or 0)) if head is not None else Cursor(0)
        answering = bool(given.resume) or (bool(given.messages) and given.messages[-1].role == "tool")
        client = client_turn_of(given, new_turn=not answering)
        prompt = None if answering else next((m for m in reversed(given.messages) if isinstance(m, UserMessage)), None)
        note = None if prompt is None else {"messageId": prompt.id}  # a snapshot names the prompt as its client did
        keyed = RequestKey(AGUI_KEYS + given.run_id, digest(_asked(name, given)), after.step, explicit=False, note=note)
        if answering:
            if head is None:
                raise RequestError(f"no run {thread_id!r}: resume answers the interrupts of an existing thread", status=404)
            await self._owned(thread_id, name, head)
            pending = {item["id"]: item for item in interrupts_of(head)}
            refs = {interrupt_ref(thread_id, after.step, ident): ident for ident in pending}
            answers = responses_of(given, pending, refs) + tool_answers(given, pending)
            first = await self.runs.answer(thread_id, answers, keyed, client)
        else:
            first = await self.runs.start_run(name, prompt_of(given), thread_id, keyed, client)
        if first is not None:  # a repeat of an input this thread took: the first one's AG-UI run, from where it started
            after = Cursor(int(first.get("after") or 0))
        view = await asyncio.to_thread(functools.partial(read_thread, self.runs.store, thread_id, after, prompt=prompt is None))
        messages = [*view.messages, prompt] if prompt is not None else view.messages  # the prompt is the client's: not echoed
        return self._stream(AguiTranslator(thread_id, given.run_id, after, view.state, messages))

    async def reconnect(self, request: Request) -> Response:
        """Go on with an AG-UI run after the client's last SSE id.

        Args:
            request: ``GET /agents/{name}/agui/{thread_id}`` with ``Last-Event-ID`` or ``?after=``.
        """
        name = self._agent(request)
        thread_id = _thread_id(request.path_params["thread_id"])
        given = request.query_params.get("after") or request.headers.get("last-event-id")
        after = Cursor.parse(given) if given is not None and given.strip() else None  # None: the latest AG-UI run
        head = await asyncio.to_thread(self.runs.store.head, thread_id)
        if head is None:
            if not self.runs.executing(thread_id):
                raise RequestError(f"no run {thread_id!r}", status=404)
        else:
            await self._owned(thread_id, name, head)
        view = await asyncio.to_thread(read_thread, self.runs.store, thread_id, after)
        run_id = request.query_params.get("runId") or view.run_id or f"{thread_id}@{cursor_id(view.after)}"
        return self._stream(AguiTranslator(thread_id, run_id, view.after, view.state, view.messages))

    # -- helpers -------------------------------------------------------------------------------

    def _agent(self, request: Request) -> str:
        name: str = request.path_params["name"]
        if name not in self.runs.registry:
            raise RequestError(f"unknown agent {name!r}; this server has {sorted(self.runs.registry)}", status=404)
        return name

    async def _owned(self, thread_id: str, name: str, head: dict[str, Any]) -> None:
        owner = await asyncio.to_thread(entry_of, self.runs.registry, head)
        if owner != name:
            whose = "no agent of this server" if owner is None else f"agent {owner!r}"
            raise RequestError(f"thread {thread_id!r} is a run of {whose}, not of agent {name!r}", status=409)

    def _stream(self, translator: AguiTranslator) -> Response:
        source = run_events(self.runs, translator.thread_id, translator.after, poll_interval=self.poll_interval, keepalive=self.keepalive)
        return StreamingResponse(agui_sse(translator, source), media_type="text/event-stream", headers=SSE_HEADERS)


async def agui_sse(translator: AguiTranslator, source: AsyncIterator[ServeEvent | None]) -> AsyncIterator[bytes]:
    """The SSE body of one connection: the translator's frames for each event of ``source``,
    a comment for a keepalive tick; it stops once the AG-UI run ended.

    Args:
        translator: The connection's translation.
        source: The run's events (:func:`~tether.serve.stream.run_events`).
    """
    yield b"retry: 1000\n\n"
    yield encode(translator.start())
    try:
        async for event in source:
            if event is None:
                yield b": keepalive\n\n"
                continue
            frames = translator.feed(event)
            if frames:
                yield encode(frames)
            if translator.done:
                return
    except Exception as exc:  # the response has started: a RUN_ERROR, then the stream closes (the client reconnects)
        status, message = stream_error(exc, "an AG-UI stream")
        yield encode([Frame(RunErrorEvent(message=message, code=f"http.{status}"))])
    finally:
        if isinstance(source, AsyncGenerator):
            await source.aclose()  # leaves the run's listeners at once


def _asked(name: str, given: RunAgentInput) -> dict[str, Any]:
    """What an input asks, for its digest: the agent, its interrupt answers and client-tool
    results, or its prompt (the last user message, with its id). A repeat (same ``runId``) must
    ask the same, or it is a 422."""
    results = [message.model_dump(mode="json", by_alias=True) for message in given.messages if message.role == "tool"]
    if given.resume or (given.messages and given.messages[-1].role == "tool"):
        return {"agent": name, "resume": [entry.model_dump(mode="json", by_alias=True) for entry in given.resume or []], "results": results}
    users = [message for message in given.messages if message.role == "user"]
    last = users[-1].model_dump(mode="json", by_alias=True) if users else None
    return {"agent": name, "prompt": last}


def _thread_id(value: Any) -> str:
    try:
        thread: str = run_id_of(value)
    except RequestError as exc:
        raise RequestError(f"threadId: {exc}") from None
    return thread


__all__ = ["AguiEndpoint", "agui_sse"]
