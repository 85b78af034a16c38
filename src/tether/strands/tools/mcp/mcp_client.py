"""Strands' ``MCPClient`` on Tether's MCP machinery (:class:`tether.mcp.MCPSource`).

``MCPClient(lambda: stdio_client(StdioServerParameters(...)))`` holds one MCP session on the
source's own thread, as Tether's MCP servers do; it works as a context manager with Strands'
synchronous calls (``list_tools_sync``, ``call_tool_sync``) and directly in ``tools=[client]``
(it is a Tether tool source, so the agent starts it before the first call and closes it with
itself). Listed tools and call results are mapped as Strands maps them: the text blocks of a
result stay text, ``structuredContent``/``metadata``/``isError`` ride along as keys of the
ToolResult, tool specs carry ``outputSchema`` and ``annotations``.
"""

from __future__ import annotations

import base64
import functools
import re
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from types import TracebackType
from typing import Any, TypedDict

from ....errors import ConfigurationError
from ....mcp.errors import MCPError
from ....mcp.results import hinted_idempotent
from ....mcp.source import MCPSource
from ....tools.context import ToolContext as _TetherToolContext
from ....types import ToolResult, ToolResultContent, ToolSpec, ToolUse
from ...types.exceptions import MCPClientInitializationError
from .._events import ToolResultEvent
from .._schema import normalize_tool_spec
from ..agent_tool import AgentTool, ToolGenerator
from ..tool_provider import ToolProvider

MIME_TO_FORMAT = {"image/jpeg": "jpeg", "image/jpg": "jpeg", "image/png": "png", "image/gif": "gif", "image/webp": "webp"}
_TEXTUAL = ("application/json", "application/xml", "application/javascript", "application/yaml", "application/x-yaml")
_UNSUPPORTED = ("meta", "auth", "auth_provider", "elicitation_callback", "progress_callback", "tasks_config", "on_tools_changed")


class ToolFilters(TypedDict, total=False):
    """Which listed tools to keep: ``allowed`` first, then ``rejected`` (names, regex patterns
    matched against the server's name, or callables of the tool)."""

    allowed: list[Any]
    rejected: list[Any]


class PaginatedList(list[Any]):
    """A page of tools with the token of the next page (None on the last)."""

    def __init__(self, items: list[Any], token: str | None = None) -> None:
        super().__init__(items)
        self.pagination_token = token


class MCPClient(MCPSource, ToolProvider):
    """An MCP server connection with Strands' API.

    Args:
        transport_callable: Makes the transport (e.g. ``lambda: stdio_client(params)``).
        url: A streamable-HTTP endpoint instead of ``transport_callable``.
        headers: HTTP headers (with ``url``).
        startup_timeout: Seconds to connect and initialize.
        tool_filters: ``{"allowed": [...], "rejected": [...]}``.
        prefix: Expose each tool as ``<prefix>_<name>``.
        continue_on_error: A connection failure in ``load_tools`` yields no tools instead of raising.

    Raises:
        ConfigurationError: Neither or both of ``transport_callable`` and ``url``, or an option
            Tether does not support (``auth``, ``elicitation_callback``, ...) was given.
    """

    def __init__(
        self,
        transport_callable: Callable[[], Any] | None = None,
        *,
        url: str | None = None,
        headers: dict[str, str] | None = None,
        startup_timeout: int = 30,
        tool_filters: ToolFilters | None = None,
        prefix: str | None = None,
        application_name: str | None = None,
        application_version: str | None = None,
        continue_on_error: bool = False,
        **unsupported: Any,
    ) -> None:
        if (transport_callable is None) == (url is None):
            raise ConfigurationError("MCPClient needs exactly one of transport_callable and url=")
        for key, value in unsupported.items():
            if key not in _UNSUPPORTED:
                raise TypeError(f"MCPClient.__init__() got an unexpected keyword argument {key!r}")
            if value is not None:
                raise ConfigurationError(f"MCPClient({key}=...) is not supported by tether.strands yet")
        if headers is not None and url is None:
            raise ConfigurationError("MCPClient(headers=...) requires url=")
        super().__init__(name=prefix or application_name or "mcp", prefix=prefix or None, startup_timeout=startup_timeout)
        self._transport = transport_callable
        self._url = url
        self._headers = dict(headers or {})
        self._tool_filters = tool_filters
        self._continue_on_error = continue_on_error
        self._listed: dict[str, Any] = {}  # exposed name -> the server's tool, of the last listing
        self._consumers: set[Any] = set()
        self._loaded: list[MCPAgentTool] | None = None

    def _opener(self) -> Callable[[], AbstractAsyncContextManager[Any]]:
        if self._transport is not None:
            return self._transport
        from ....mcp.servers import _http_transport

        assert self._url is not None
        return functools.partial(_http_transport, self._url, dict(self._headers), self.max_result_bytes, self._core.reads)

    def _negotiator(self) -> Callable[[Any], Awaitable[Any]] | None:
        """Negotiate as Strands' ``MCPClient`` does: the mcp SDK's connect-time policy (probe
        ``server/discover`` for the newest protocol, fall back to ``initialize``), so a server
        stamps its results as it does for Strands (e.g. ``_meta`` serverInfo → ``metadata``).
        With an mcp SDK without the probe (1.x), the ``initialize`` handshake, as Strands."""
        try:
            from mcp.client.client import negotiate_auto  # type: ignore[attr-defined,unused-ignore]
        except ImportError:
            return None
        return negotiate_auto  # type: ignore[no-any-return,unused-ignore]

    # -- Strands' lifecycle ---------------------------------------------------------------

    def start(self) -> MCPClient:  # type: ignore[override]
        """Connect (blocking until the session is initialized).

        Raises:
            MCPClientInitializationError: The server could not be started or initialized.
        """
        try:
            self._core.thread.submit(self._ensure()).result()
        except MCPError as exc:
            raise MCPClientInitializationError(self.source_name, f"the client initialization failed: {exc}") from exc
        return self

    def stop(
        self, exc_type: type[BaseException] | None = None, exc_val: BaseException | None = None, exc_tb: TracebackType | None = None
    ) -> None:
        """Close the session (stopping a stdio server) and the client's thread."""
        self._core.shutdown()
        self._loaded = None

    def __enter__(self) -> MCPClient:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc_val: BaseException | None, exc_tb: TracebackType | None) -> None:
        self.stop(exc_type, exc_val, exc_tb)

    def as_tool_source(self) -> ClientSource:
        """The client as a Tether tool source (what ``to_tether_tools`` gives ``tether.Agent``)."""
        return ClientSource(self)

    # -- mapping --------------------------------------------------------------------------

    def _tool_spec(self, tool: Any, name: str) -> ToolSpec:
        self._listed[name] = tool
        return normalize_tool_spec(_spec_of(tool, name))

    def _tool_result(self, tool_use_id: str, result: Any) -> ToolResult:
        return map_call_tool_result(tool_use_id, result)

    async def list_tools(self) -> list[ToolSpec]:
        """The server's tools after ``prefix`` and ``tool_filters`` (Tether's tool-source listing)."""
        specs = await MCPSource.list_tools(self)
        return [spec for spec in specs if self._keep(self._listed[spec["name"]], spec["name"])]

    def _keep(self, tool: Any, name: str, filters: ToolFilters | None = None) -> bool:
        filters = self._tool_filters if filters is None else filters
        if not filters:
            return True
        agent_tool = MCPAgentTool(tool, self, name_override=name)
        if "allowed" in filters and not _matches(agent_tool, filters["allowed"]):
            return False
        return not ("rejected" in filters and _matches(agent_tool, filters["rejected"]))

    # -- Strands' synchronous API ---------------------------------------------------------

    def list_tools_sync(
        self, pagination_token: str | None = None, prefix: str | None = None, tool_filters: ToolFilters | None = None
    ) -> PaginatedList:
        """One page of the server's tools as :class:`MCPAgentTool` (``prefix``/``tool_filters``
        override the client's)."""
        page = self._core.thread.submit(self._page(pagination_token)).result()
        effective_prefix = self.prefix if prefix is None else prefix
        tools = []
        for tool in page.tools:
            name = f"{effective_prefix}_{tool.name}" if effective_prefix else tool.name
            self._listed[name] = tool
            if self._keep(tool, name, tool_filters):
                tools.append(MCPAgentTool(tool, self, name_override=name if effective_prefix else None))
        return PaginatedList(tools, token=getattr(page, "next_cursor", None))

    async def _page(self, token: str | None) -> Any:
        session = await self._ensure()
        if token is None:
            return await session.list_tools()
        from mcp_types import PaginatedRequestParams

        return await session.list_tools(params=PaginatedRequestParams(cursor=token))

    def call_tool_sync(self, tool_use_id: str, name: str, arguments: dict[str, Any] | None = None, *args: Any, **kwargs: Any) -> ToolResult:
        """Call the server's tool ``name`` and return the mapped result (never raises for a failed call)."""
        return self._core.thread.submit(self._direct(tool_use_id, name, arguments)).result()

    async def call_tool_async(
        self, tool_use_id: str, name: str, arguments: dict[str, Any] | None = None, *args: Any, **kwargs: Any
    ) -> ToolResult:
        """The async form of :meth:`call_tool_sync`."""
        return await self._core.thread.run(self._direct(tool_use_id, name, arguments))

    async def _direct(self, tool_use_id: str, name: str, arguments: dict[str, Any] | None, key: str | None = None) -> ToolResult:
        exposed = f"{self.prefix}_{name}" if self.prefix else name
        self._original.setdefault(exposed, name)
        return await self._call({"toolUseId": tool_use_id, "name": exposed, "input": arguments or {}}, key or tool_use_id)

    # -- Strands' ToolProvider ------------------------------------------------------------

    async def load_tools(self, **kwargs: Any) -> list[MCPAgentTool]:
        """Connect if needed and list every page of tools (cached until the client stops)."""
        try:
            await self._core.thread.run(self._ensure())
        except MCPError as exc:
            if self._continue_on_error:
                return []
            raise MCPClientInitializationError(self.source_name, f"Failed to start MCP client: {exc}") from exc
        if self._loaded is None:
            tools: list[MCPAgentTool] = []
            token: str | None = None
            while True:
                page = await self._core.thread.run(self._page(token))
                for tool in page.tools:
                    name = f"{self.prefix}_{tool.name}" if self.prefix else tool.name
                    self._listed[name] = tool
                    if self._keep(tool, name):
                        tools.append(MCPAgentTool(tool, self, name_override=name if self.prefix else None))
                token = getattr(page, "next_cursor", None)
                if not token:
                    break
            self._loaded = tools
        return self._loaded

    def add_consumer(self, consumer_id: Any, **kwargs: Any) -> None:
        self._consumers.add(consumer_id)

    def remove_consumer(self, consumer_id: Any, **kwargs: Any) -> None:
        self._consumers.discard(consumer_id)
        if not self._consumers:
            self.stop()


class ClientSource:
    """An :class:`MCPClient` as a Tether tool source: Strands' ``start()`` is synchronous and
    returns the client, Tether's is a coroutine, so the agent gets this view of the client.
    The agent starts it before its first invocation and closes it with itself."""

    def __init__(self, client: MCPClient) -> None:
        self.client = client
        self._failed = False

    @property
    def source_name(self) -> str:
        return self.client.source_name

    async def start(self) -> None:
        try:
            await MCPSource.start(self.client)
            self._failed = False
        except MCPError:
            if not self.client._continue_on_error:
                raise
            self._failed = True

    async def list_tools(self) -> list[ToolSpec]:
        return [] if self._failed else await self.client.list_tools()

    def idempotent(self, name: str) -> bool:
        return self.client.idempotent(name)

    async def call_tool(self, tool_use: ToolUse, context: _TetherToolContext) -> ToolResult:
        return await self.client.call_tool(tool_use, context)

    async def close(self) -> None:
        await self.client.close()


class MCPAgentTool(AgentTool):
    """One tool of an MCP server as a Strands-style tool (what ``list_tools_sync`` returns).

    In an agent the call carries Tether's idempotency key like every MCP call; the tool is
    idempotent (re-run after a crash left it in doubt) when the server hints so.
    """

    streams_events = False

    def __init__(self, mcp_tool: Any, mcp_client: MCPClient, name_override: str | None = None, timeout: Any = None) -> None:
        super().__init__()
        self.mcp_tool = mcp_tool
        self.mcp_client = mcp_client
        self._agent_tool_name = name_override or mcp_tool.name
        self.timeout = timeout
        self.idempotent = hinted_idempotent(mcp_tool)

    @property
    def tool_name(self) -> str:
        return self._agent_tool_name

    @property
    def tool_spec(self) -> ToolSpec:
        return _spec_of(self.mcp_tool, self.tool_name)

    @property
    def tool_type(self) -> str:
        return "python"

    async def stream(self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any) -> ToolGenerator:
        context = kwargs.get("_tool_context")
        key = context.idempotency_key if isinstance(context, _TetherToolContext) else None
        client = self.mcp_client
        result = await client._core.thread.run(client._direct(tool_use["toolUseId"], self.mcp_tool.name, tool_use["input"], key))
        yield ToolResultEvent(result)


def _spec_of(tool: Any, name: str) -> ToolSpec:
    """Strands' ToolSpec of a listed MCP tool."""
    spec: dict[str, Any] = {
        "inputSchema": {"json": getattr(tool, "input_schema", None)},
        "name": name,
        "description": getattr(tool, "description", None) or f"Tool which performs {tool.name}",
    }
    output = getattr(tool, "output_schema", None)
    if output:
        spec["outputSchema"] = {"json": output}
    annotations = getattr(tool, "annotations", None)
    if annotations is not None:
        dumped = annotations.model_dump(by_alias=True, exclude_none=True)
        if dumped:
            spec["annotations"] = dumped
    return spec  # type: ignore[return-value]


def _matches(tool: MCPAgentTool, patterns: list[Any]) -> bool:
    for pattern in patterns:
        if callable(pattern) and not isinstance(pattern, re.Pattern):
            if pattern(tool):
                return True
        elif isinstance(pattern, re.Pattern):
            if pattern.match(tool.mcp_tool.name):
                return True
        elif isinstance(pattern, str) and pattern == tool.mcp_tool.name:
            return True
    return False


def map_call_tool_result(tool_use_id: str, result: Any) -> ToolResult:
    """Strands' ToolResult of an MCP ``CallToolResult``: the content blocks mapped one by one
    (unsupported ones dropped), plus ``structuredContent``, ``metadata`` and ``isError``."""
    content = [mapped for block in getattr(result, "content", None) or [] if (mapped := map_content(block)) is not None]
    error = getattr(result, "is_error", None)
    mapped_result: dict[str, Any] = {"status": "error" if error else "success", "toolUseId": tool_use_id, "content": content}
    structured = getattr(result, "structured_content", None)
    if structured is not None:
        mapped_result["structuredContent"] = structured
    if getattr(result, "meta", None):
        mapped_result["metadata"] = result.meta
    if error is not None:
        mapped_result["isError"] = error
    return mapped_result  # type: ignore[return-value]


def map_content(block: Any) -> ToolResultContent | None:
    """One MCP content block as a ToolResult content block (None: not representable, dropped)."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return {"text": block.text}
    if kind == "image":
        mime = getattr(block, "mime_type", None)
        if mime not in MIME_TO_FORMAT:
            return None
        return {"image": {"format": MIME_TO_FORMAT[mime], "source": {"bytes": base64.b64decode(block.data)}}}
    if kind != "resource":
        return None
    resource = block.resource
    if isinstance(getattr(resource, "text", None), str):
        return {"text": resource.text}
    blob = getattr(resource, "blob", None)
    if blob is None:
        return None
    try:
        raw = base64.b64decode(blob)
    except Exception:
        return None
    mime = getattr(resource, "mime_type", None)
    if mime and (mime.startswith("text/") or mime in _TEXTUAL or mime.endswith(("+json", "+xml"))):
        return {"text": raw.decode("utf-8", errors="replace")}
    if mime in MIME_TO_FORMAT:
        return {"image": {"format": MIME_TO_FORMAT[mime], "source": {"bytes": raw}}}
    return None


__all__ = [
    "ClientSource",
    "MCPAgentTool",
    "MCPClient",
    "MCPClientInitializationError",
    "PaginatedList",
    "ToolFilters",
    "map_call_tool_result",
    "map_content",
]
