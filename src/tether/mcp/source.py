"""The MCP tool source: the part shared by stdio and HTTP servers (options, lifecycle, calls)."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Awaitable, Callable, Collection
from contextlib import AbstractAsyncContextManager
from typing import Any, TypedDict, Unpack

from ..errors import ConfigurationError
from ..tools.base import error_result
from ..tools.context import ToolContext
from ..types import ToolResult, ToolSpec, ToolUse
from .connection import Connection
from .errors import MCPError, RetryRefused, TaskRefused
from .input_required import call_with_rounds
from .limits import DEFAULT_MAX_RESULT_BYTES, ResponseRead, ResponseReads, result_size
from .loop_thread import LoopThread
from .results import hinted_idempotent, to_tool_result, to_tool_spec
from .stderr import StderrTail
from .tasks import task_of

IDEMPOTENCY_META_KEY = "tether/idempotency_key"
"""The key under which every ``tools/call`` request's ``_meta`` carries the call's idempotency
key (``run_id/toolUseId``, the same on every re-run of an in-doubt call), so a server can
deduplicate."""

Retry = tuple[dict[str, Any], str | None]
"""The input responses (keyed as the server asked) and the echoed request state of a retry."""

DEFAULT_STARTUP_TIMEOUT = 30.0
DEFAULT_LIST_TIMEOUT = 30.0
DEFAULT_CALL_TIMEOUT = 300.0


class MCPOptions(TypedDict, total=False):
    """The options every kind of MCP server takes, described in :class:`MCPSource` (an option
    left out has the default given there)."""

    prefix: str | None
    include: Collection[str] | None
    exclude: Collection[str] | None
    idempotent: bool | Collection[str] | None
    startup_timeout: float | None
    list_timeout: float | None
    call_timeout: float | None
    max_result_bytes: int | None
    protocol: str


class _Core:
    """What a source's connection needs, kept apart from the source object so a finalizer can
    close it when the source is dropped or the interpreter exits (a finalizer must not hold the
    object it finalizes)."""

    def __init__(self, name: str, thread: LoopThread) -> None:
        self.name = name
        self.thread = thread
        self.connection: Connection | None = None
        self.lock: asyncio.Lock | None = None  # made on the loop thread
        self.stderr: StderrTail | None = None  # a stdio server's stderr, replaced at each start
        self.reads = ResponseReads()  # what the HTTP transport read of each call's response

    def new_stderr(self) -> StderrTail:
        """A fresh stderr file for a server process about to start (the previous one is removed)."""
        self.drop_stderr()
        self.stderr = StderrTail()
        return self.stderr

    def drop_stderr(self) -> None:
        stderr, self.stderr = self.stderr, None
        if stderr is not None:
            stderr.close()

    async def disconnect(self) -> None:
        connection, self.connection = self.connection, None
        if connection is not None:
            await connection.close()

    def shutdown(self) -> None:
        """Close the connection and stop the thread, from any thread but the loop's own."""
        if self.thread.in_thread():
            return
        if self.connection is not None:
            try:
                self.thread.submit(self.disconnect()).result(timeout=30)
            except Exception:  # exiting anyway; the transport already bounded its own steps
                pass
        self.thread.stop()
        self.lock = None  # bound to the stopped loop
        self.drop_stderr()


class MCPSource:
    """A :class:`~tether.tools.ToolSource` serving the tools of one MCP server.

    Use :class:`~tether.mcp.MCPServerStdio` or :class:`~tether.mcp.MCPServerHTTP`. The session
    lives on a thread of its own (see :mod:`tether.mcp.loop_thread`), so the source works from
    sync ``agent(...)`` calls, async code and Temporal activities alike; it is opened on first
    use, shared by all the source's tools, reopened on the next use after the server died, and
    closed with the agent (or, failing that, when the source is garbage collected or the
    interpreter exits).

    Args:
        name: The server's name in errors and logs.

    Keyword Args:
        prefix (str | None): Expose each tool as ``<prefix>_<tool>`` (None, the default: the server's names).
        include (Collection[str] | None): Only these tools (server names; None: all).
        exclude (Collection[str] | None): Leave these tools out (server names).
        idempotent (bool | Collection[str] | None): ``True``: every tool may be re-run after a crash; a collection: these
            tools; ``False``/None: none, except tools annotated ``idempotentHint`` or
            ``readOnlyHint`` by the server (None only).
        startup_timeout (float | None): Seconds to start (connect) and finish the MCP handshake (None: no limit;
            default 30).
        list_timeout (float | None): Seconds for ``tools/list`` (None: no limit; default 30).
        call_timeout (float | None): Seconds for one ``tools/call`` (None: no limit; default 300).
        max_result_bytes (int | None): The largest tool result passed on (None: no limit; default 10 MiB); a larger one is an
            error result naming the tool and the cap (see :mod:`tether.mcp.limits` for what each
            transport reads of it first).
        protocol (str): ``"legacy"`` (the default): the ``initialize`` handshake (revisions up to 2025-11-25);
            ``"auto"``: probe ``server/discover`` and speak the 2026-07-28 revision with a server that has it (so a
            tool may answer with questions, see :mod:`tether.mcp.input_required`), else the handshake.
    """

    def __init__(self, *, name: str, **options: Unpack[MCPOptions]) -> None:
        prefix, include, exclude = options.get("prefix"), options.get("include"), options.get("exclude")
        idempotent = options.get("idempotent")
        startup_timeout = options.get("startup_timeout", DEFAULT_STARTUP_TIMEOUT)
        list_timeout = options.get("list_timeout", DEFAULT_LIST_TIMEOUT)
        call_timeout = options.get("call_timeout", DEFAULT_CALL_TIMEOUT)
        max_result_bytes = options.get("max_result_bytes", DEFAULT_MAX_RESULT_BYTES)
        protocol = options.get("protocol", "legacy")
        if not isinstance(name, str) or not name:
            raise ConfigurationError(f"name= of an MCP server must be a non-empty string, got {name!r}")
        for option, value in (("include", include), ("exclude", exclude)):
            if value is not None and (isinstance(value, str) or not all(isinstance(item, str) for item in value)):
                raise ConfigurationError(f"{option}= of MCP server {name!r} must be a collection of tool names, got {value!r}")
        if idempotent is not None and not isinstance(idempotent, bool):
            if isinstance(idempotent, str) or not all(isinstance(item, str) for item in idempotent):
                raise ConfigurationError(f"idempotent= of MCP server {name!r} must be a bool or a collection of tool names: {idempotent!r}")
        if prefix is not None and (not isinstance(prefix, str) or not prefix):
            raise ConfigurationError(f"prefix= of MCP server {name!r} must be a non-empty string, got {prefix!r}")
        for option, seconds in (("startup_timeout", startup_timeout), ("list_timeout", list_timeout), ("call_timeout", call_timeout)):
            if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds <= 0):
                raise ConfigurationError(f"{option}= of MCP server {name!r} must be a positive number of seconds or None, got {seconds!r}")
        cap = max_result_bytes
        if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap <= 0):
            raise ConfigurationError(f"max_result_bytes= of MCP server {name!r} must be a positive int or None, got {max_result_bytes!r}")
        if protocol not in ("auto", "legacy"):
            raise ConfigurationError(f"protocol= of MCP server {name!r} must be 'auto' or 'legacy', got {protocol!r}")
        self._name = name
        self.protocol = protocol
        self.prefix = prefix
        self.include = None if include is None else frozenset(include)
        self.exclude = frozenset(exclude or ())
        self._idempotent = idempotent
        self.startup_timeout = startup_timeout
        self.list_timeout = list_timeout
        self.call_timeout = call_timeout
        self.max_result_bytes = max_result_bytes
        self._core = _Core(name, LoopThread(name))
        self._original: dict[str, str] = {}  # exposed name -> the server's name
        self._hinted: set[str] = set()  # exposed names whose annotations say idempotent
        weakref.finalize(self, self._core.shutdown)

    # -- what subclasses provide ----------------------------------------------------------

    def _opener(self) -> Callable[[], AbstractAsyncContextManager[Any]]:
        """A function making the transport's async context manager (yields ``(read, write, ...)``),
        called on the loop thread. It must not hold the source itself: the open connection keeps
        it, and a source that its own connection keeps alive could never be collected (and its
        server never stopped by the finalizer)."""
        raise NotImplementedError

    def _negotiator(self) -> Callable[[Any], Awaitable[Any]] | None:
        """How a new session negotiates the protocol (None: the ``initialize`` handshake, which
        every MCP server answers). Like :meth:`_opener`, it must not hold the source."""
        return None if self.protocol == "legacy" else _negotiate_auto

    def _stderr_tail(self) -> str:
        """The end of the server's stderr ("" when there is none)."""
        stderr = self._core.stderr
        return "" if stderr is None else stderr.tail()

    # -- ToolSource -----------------------------------------------------------------------

    @property
    def source_name(self) -> str:
        return self._name

    def _error(self, message: str) -> MCPError:
        return MCPError(self._name, message, stderr_tail=self._stderr_tail())

    async def start(self) -> None:
        """Start the server / connect (within ``startup_timeout``); a no-op when connected."""
        await self._core.thread.run(self._ensure())

    async def _ensure(self) -> Any:
        core = self._core
        if core.lock is None:
            core.lock = asyncio.Lock()
        async with core.lock:
            if core.connection is not None and core.connection.alive:
                return core.connection.session
            await core.disconnect()  # a dead one (the server exited): reap it, then start again
            connection = Connection(self._opener(), self._negotiator())
            try:
                await connection.open(self.startup_timeout)
            except TimeoutError:
                raise self._error(f"did not complete the MCP handshake within startup_timeout={self.startup_timeout}s") from None
            except Exception as exc:
                raise self._error(f"could not be started or connected: {_describe(exc)}") from None
            core.connection = connection
            return connection.session

    async def list_tools(self) -> list[ToolSpec]:
        """The server's tools (after ``include``/``exclude``, renamed with ``prefix``)."""
        return await self._core.thread.run(self._list())

    async def _list(self) -> list[ToolSpec]:
        session = await self._ensure()
        tools: list[Any] = []
        cursor: str | None = None
        try:
            async with asyncio.timeout(self.list_timeout):
                while True:
                    if cursor is None:
                        page = await session.list_tools()
                    else:
                        from mcp_types import PaginatedRequestParams

                        page = await session.list_tools(params=PaginatedRequestParams(cursor=cursor))
                    tools.extend(page.tools)
                    cursor = page.next_cursor
                    if not cursor:
                        break
        except TimeoutError:
            await self._core.disconnect()
            raise self._error(f"did not list its tools within list_timeout={self.list_timeout}s") from None
        except Exception as exc:
            culprits = await _non_object_schemas(session) if type(exc).__name__ == "ValidationError" else []
            await self._core.disconnect()
            if culprits:
                raise self._error(
                    f"tool {culprits[0]!r} has an input schema that is not a JSON object schema; Tether passes tool "
                    f'arguments as an object, so the server must declare "type": "object" (tools with such schemas: {culprits})'
                ) from None
            raise self._error(f"could not list its tools: {_describe(exc)}") from None
        names = [tool.name for tool in tools]
        if self.include is not None and (missing := sorted(self.include - set(names))):
            raise self._error(f"include= names tools the server does not have: {missing}; it has {sorted(names)}")
        specs: list[ToolSpec] = []
        original: dict[str, str] = {}
        hinted: set[str] = set()
        for tool in tools:
            if (self.include is not None and tool.name not in self.include) or tool.name in self.exclude:
                continue
            exposed = f"{self.prefix}_{tool.name}" if self.prefix else tool.name
            specs.append(self._tool_spec(tool, exposed))
            original[exposed] = tool.name
            if hinted_idempotent(tool):
                hinted.add(exposed)
        self._original, self._hinted = original, hinted
        return specs

    def idempotent(self, name: str) -> bool:
        """``idempotent=True``: every tool; a collection: the tools it names (server names);
        otherwise a tool whose MCP annotations carry ``idempotentHint`` or ``readOnlyHint``
        (unless ``idempotent=False``)."""
        setting = self._idempotent
        if isinstance(setting, bool):
            return setting
        if setting is not None and self._original.get(name, name) in setting:
            return True
        return name in self._hinted

    def server_tool_name(self, name: str) -> str:
        """The server's name of the tool exposed as ``name`` (without the prefix)."""
        if name in self._original:
            return self._original[name]
        if self.prefix and name.startswith(self.prefix + "_"):
            return name[len(self.prefix) + 1 :]
        return name

    async def call_tool(self, tool_use: ToolUse, context: ToolContext) -> ToolResult:
        """Call the tool on the server (reconnecting first if the server died); a failure or a
        timeout is an error result naming the server, with its stderr tail. A call the server
        answers with questions stops the run on interrupts and is retried with the answers
        (:mod:`tether.mcp.input_required`)."""
        return await call_with_rounds(self, tool_use, context)

    async def send(self, tool_use: ToolUse, key: str, retry: Retry | None = None) -> ToolResult | Any:
        """One ``tools/call`` on the source's thread: the ``toolResult``, or the server's
        ``InputRequiredResult``. ``retry`` is ``(input responses, request state)`` of a retry.

        Raises:
            RetryRefused: The server answered a retry with a JSON-RPC error.
        """
        return await self._core.thread.run(self._call(tool_use, key, retry))

    async def task_request(self, method: str, task_id: str) -> dict[str, Any]:
        """``tasks/get`` or ``tasks/cancel`` of task ``task_id`` on the source's thread: the
        server's result as JSON.

        Raises:
            TaskRefused: The server answered with a JSON-RPC error (its code and message).
            MCPError: The server could not be reached, or did not answer within ``call_timeout``.
        """
        return await self._core.thread.run(self._task_request(method, task_id))

    async def _task_request(self, method: str, task_id: str) -> dict[str, Any]:
        import mcp_types as types
        from mcp.shared.exceptions import MCPError as ProtocolError
        from pydantic import TypeAdapter

        session = await self._ensure()
        request: Any
        if method == "tasks/get":
            request = types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task_id))
        else:
            request = types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=task_id))
        try:
            async with asyncio.timeout(self.call_timeout):
                data: dict[str, Any] = await session.send_request(request, TypeAdapter(dict[str, Any]))
                return data
        except TimeoutError:
            await self._core.disconnect()
            raise self._error(f"{method} of task {task_id!r} did not answer within call_timeout={self.call_timeout}s") from None
        except ProtocolError as exc:
            if self._core.connection is not None and not self._core.connection.alive:
                await self._core.disconnect()
                raise self._error(f"{method} of task {task_id!r} failed: {_describe(exc)}") from None
            raise TaskRefused(exc.code, str(exc)) from None
        except Exception as exc:
            await self._core.disconnect()
            raise self._error(f"{method} of task {task_id!r} failed: {_describe(exc)}") from None

    def keeps_handle(self, state: dict[str, Any], tool_use_id: str) -> bool:
        """Whether call ``tool_use_id`` keeps an MCP task in the run (``tether.mcp.tasks``)."""
        return task_of(state, tool_use_id) is not None

    async def _call(self, tool_use: ToolUse, key: str, retry: Retry | None = None) -> ToolResult | Any:
        tool_use_id = tool_use["toolUseId"]
        name = self.server_tool_name(tool_use["name"])
        arguments = tool_use.get("input")
        try:
            session = await self._ensure()
        except MCPError as exc:
            return error_result(tool_use_id, f"Error: {exc}")
        reads = self._core.reads
        reads.pop(key)  # an earlier attempt's, not this one's
        try:
            async with asyncio.timeout(self.call_timeout):
                result = await session.call_tool(
                    name,
                    arguments if isinstance(arguments, dict) else {},
                    meta={IDEMPOTENCY_META_KEY: key},
                    input_responses=None if retry is None else retry[0],
                    request_state=None if retry is None else retry[1],
                    allow_input_required=True,
                    allow_claimed=True,
                )
        except TimeoutError:
            reads.pop(key)
            await self._core.disconnect()  # a server that does not answer is restarted on next use
            error = self._error(f"tool {name!r} did not answer within call_timeout={self.call_timeout}s")
            return error_result(tool_use_id, f"Error: {error}")
        except Exception as exc:
            from mcp.shared.exceptions import MCPError as ProtocolError

            if (cut := self._cut_short(tool_use_id, name, reads.pop(key))) is not None:
                return cut
            if not isinstance(exc, ProtocolError) or (self._core.connection is not None and not self._core.connection.alive):
                await self._core.disconnect()  # the connection broke (e.g. the server crashed)
            elif retry is not None:
                raise RetryRefused(_describe(exc)) from None
            return error_result(tool_use_id, f"Error: {self._error(f'tool {name!r} failed: {_describe(exc)}')}")
        reads.pop(key)
        if type(result).__name__ in ("InputRequiredResult", "TaskCreated"):
            return result  # questions (tether.mcp.input_required) or a task (tether.mcp.tasks)
        if self.max_result_bytes is not None and (size := result_size(result)) > self.max_result_bytes:
            return self._too_large(tool_use_id, name, f"{size:,} bytes")
        return self._tool_result(tool_use_id, result)

    def _tool_spec(self, tool: Any, name: str) -> ToolSpec:
        """The ``ToolSpec`` of the listed MCP tool ``tool`` exposed as ``name`` (a subclass may
        map it differently)."""
        return to_tool_spec(self._name, tool, name)

    def _tool_result(self, tool_use_id: str, result: Any) -> ToolResult:
        """The ``toolResult`` of an MCP ``CallToolResult`` (a subclass may map it differently)."""
        return to_tool_result(tool_use_id, result)

    def _cut_short(self, tool_use_id: str, name: str, read: ResponseRead | None) -> ToolResult | None:
        """The error result for a call whose HTTP response the transport cut short for its size
        (None: it was not, the failure is another)."""
        if read is None:
            return None
        if read.dropped:
            return self._too_large(tool_use_id, name, f"more than {read.read:,} bytes arrived; the rest was not read")
        if read.event_limit is not None and read.read > read.event_limit:
            error = MCPError(
                self._name,
                f"tool {name!r} returned a result the MCP SDK's HTTP client refused: its server-sent events are limited "
                f"to {read.event_limit} bytes and {read.read:,} bytes arrived. Ask the tool for less (a narrower query, "
                "one page, a summary)",
            )
            return error_result(tool_use_id, f"Error: {error}")
        return None

    def _too_large(self, tool_use_id: str, name: str, detail: str) -> ToolResult:
        """The error result for a result over ``max_result_bytes`` (none of it reaches the model)."""
        error = MCPError(
            self._name,
            f"tool {name!r} returned a result larger than max_result_bytes={self.max_result_bytes} ({detail}); it was "
            "dropped. Ask the tool for less (a narrower query, one page, a summary); the application can raise "
            "max_result_bytes= on this MCP server",
        )
        return error_result(tool_use_id, f"Error: {error}")

    async def close(self) -> None:
        """Close the session (stopping a stdio server) and the source's thread."""
        core = self._core
        if core.connection is not None:
            await core.thread.run(core.disconnect())
        await asyncio.to_thread(core.thread.stop)
        core.lock = None  # bound to the stopped loop; the next start makes another
        core.drop_stderr()


async def _negotiate_auto(session: Any) -> None:
    """The SDK's own ``mode="auto"`` policy: ``server/discover`` at the newest revision, the
    ``initialize`` handshake with a server that does not speak it."""
    try:
        from mcp.client._probe import negotiate_auto
    except ImportError:
        from importlib.metadata import version

        raise ConfigurationError(
            f"protocol='auto' (MCP questions and tasks) needs mcp>=2.3; this environment has mcp {version('mcp')} "
            "(strands-agents 1.62 pins mcp<2.2: with the strands extra, upgrade mcp yourself or keep protocol='legacy')"
        ) from None
    await negotiate_auto(session)


async def _non_object_schemas(session: Any) -> list[str]:
    """The names of listed tools whose input schema is not an object, read from the raw listing.

    The SDK refuses such a listing as a whole (a validation error naming only an index), so this
    asks again without validation, only to name the culprits in the error (best effort: [] when
    the SDK's internals differ).
    """
    try:
        raw = await session._dispatcher.send_raw_request("tools/list", None, {"timeout": 10.0})
        tools = raw.get("tools") if isinstance(raw, dict) else None
        return [
            str(tool.get("name"))
            for tool in tools or []
            if isinstance(tool, dict) and (not isinstance(tool.get("inputSchema"), dict) or tool["inputSchema"].get("type") != "object")
        ]
    except Exception:
        return []


def _describe(exc: BaseException) -> str:
    """``Type: message`` of an exception, unwrapping exception groups to their first leaf."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc) or repr(exc)
    return f"{type(exc).__name__}: {text}"


__all__ = ["DEFAULT_CALL_TIMEOUT", "DEFAULT_LIST_TIMEOUT", "DEFAULT_STARTUP_TIMEOUT", "IDEMPOTENCY_META_KEY", "MCPSource"]
