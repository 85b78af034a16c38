"""The two kinds of MCP server a Tether agent takes tools from: a local process over stdio and a
remote endpoint over streamable HTTP."""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, Unpack
from urllib.parse import urlsplit

from ..errors import ConfigurationError
from .limits import ResponseReads
from .source import IDEMPOTENCY_META_KEY, MCPOptions, MCPSource


class MCPServerStdio(MCPSource):
    """An MCP server run as a child process, spoken to over its stdin/stdout.

    One process serves all the source's tools; it is started on first use, restarted on the
    next use after it died, and stopped when the agent closes (``agent.close()`` / ``async with
    agent``) or, for an agent never closed, when the source is garbage collected or Python exits.
    Its stderr goes to a temporary file whose tail is quoted in error messages.

    Args:
        command: The executable (e.g. ``sys.executable``, ``"npx"``, ``"uvx"``).
        args: Its arguments.
        env: Extra environment variables, merged over the MCP SDK's safe default environment
            (``HOME``, ``PATH``, ``USER``, ...), not over the whole environment of this process.
        cwd: Working directory of the process.
        name: The server's name in errors and logs (default: the command and first argument).

    Keyword Args:
        prefix (str | None): Expose each tool as ``<prefix>_<tool>`` (to avoid name clashes).
        include (Collection[str] | None): Only these tools (server names); naming a tool the server lacks is an error.
        exclude (Collection[str] | None): Leave these tools out (server names).
        idempotent (bool | Collection[str] | None): ``True``: every tool may be re-run after a crash; a collection: these tools
            (server names); ``False``: none; ``None`` (default): the tools whose MCP annotations
            say ``idempotentHint`` or ``readOnlyHint``. Non-idempotent in-doubt calls go to the
            agent's ``reconcile`` hook or become an interrupt instead of re-running.
        startup_timeout (float | None): Seconds for the process to start and finish the MCP handshake.
        list_timeout (float | None): Seconds for ``tools/list``.
        call_timeout (float | None): Seconds for one ``tools/call`` (then the call is an error result and the
            process is restarted on next use).
        max_result_bytes (int | None): The largest tool result passed on (default 10 MiB; None: no limit); a
            larger one is an error result naming the tool and the cap. Over stdio the SDK reads
            the message whole first (see :mod:`tether.mcp.limits`).
    """

    def __init__(
        self,
        command: str,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        *,
        name: str | None = None,
        **options: Unpack[MCPOptions],
    ) -> None:
        if not isinstance(command, str) or not command:
            raise ConfigurationError(f"command= of MCPServerStdio must be a non-empty string, got {command!r}")
        if isinstance(args, str) or not all(isinstance(arg, str) for arg in args):
            raise ConfigurationError(f"args= of MCPServerStdio({command!r}) must be a list of strings, got {args!r}")
        if env is not None and not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
            raise ConfigurationError(f"env= of MCPServerStdio({command!r}) must map strings to strings")
        self.command = command
        self.args = list(args)
        self.env = None if env is None else dict(env)
        self.cwd = None if cwd is None else os.fspath(cwd)
        default = " ".join([Path(command).name, *(Path(a).name for a in self.args[:1])])
        super().__init__(name=default if name is None else name, **options)

    def _opener(self) -> Callable[[], AbstractAsyncContextManager[Any]]:
        from mcp.client.stdio import StdioServerParameters, stdio_client

        params = StdioServerParameters(command=self.command, args=self.args, env=self.env, cwd=self.cwd)
        core = self._core

        def open_stdio() -> AbstractAsyncContextManager[Any]:
            return stdio_client(params, errlog=core.new_stderr().file)

        return open_stdio

    def __repr__(self) -> str:
        return f"MCPServerStdio({self.command!r}, args={self.args!r}, name={self.source_name!r})"


class MCPServerHTTP(MCPSource):
    """An MCP server reached over streamable HTTP.

    Args:
        url: The server's MCP endpoint (e.g. ``http://127.0.0.1:8000/mcp``).
        headers: HTTP headers sent with every request (e.g. ``Authorization``).
        name: The server's name in errors and logs (default: host and path of ``url``).

    Keyword Args:
        prefix (str | None): Expose each tool as ``<prefix>_<tool>``.
        include (Collection[str] | None): Only these tools (server names).
        exclude (Collection[str] | None): Leave these tools out (server names).
        idempotent (bool | Collection[str] | None): As for :class:`MCPServerStdio`.
        startup_timeout (float | None): Seconds to connect and finish the MCP handshake.
        list_timeout (float | None): Seconds for ``tools/list``.
        call_timeout (float | None): Seconds for one ``tools/call``.
        max_result_bytes (int | None): The largest tool result passed on (default 10 MiB; None: no limit); the
            response to a call is read only up to it, then dropped, and the call is an error
            result naming the tool and the cap.
    """

    def __init__(
        self,
        url: str,
        headers: Mapping[str, str] | None = None,
        *,
        name: str | None = None,
        **options: Unpack[MCPOptions],
    ) -> None:
        parts = urlsplit(url) if isinstance(url, str) else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
            raise ConfigurationError(f"url= of MCPServerHTTP must be an http(s) URL, got {url!r}")
        if headers is not None and not all(isinstance(k, str) and isinstance(v, str) for k, v in headers.items()):
            raise ConfigurationError(f"headers= of MCPServerHTTP({url!r}) must map strings to strings")
        self.url = url
        self.headers = dict(headers or {})
        super().__init__(name=f"{parts.netloc}{parts.path}" if name is None else name, **options)

    def _opener(self) -> Callable[[], AbstractAsyncContextManager[Any]]:
        return functools.partial(_http_transport, self.url, dict(self.headers), self.max_result_bytes, self._core.reads)

    def __repr__(self) -> str:
        return f"MCPServerHTTP({self.url!r}, name={self.source_name!r})"


@contextlib.asynccontextmanager
async def _http_transport(url: str, headers: dict[str, str], cap: int | None, reads: ResponseReads) -> AsyncIterator[Any]:
    from mcp.client.streamable_http import streamable_http_client

    from .http_limit import capped_http_client

    async with (
        capped_http_client(headers, cap, IDEMPOTENCY_META_KEY, reads) as client,
        streamable_http_client(url, http_client=client) as streams,
    ):
        yield streams


__all__ = ["MCPServerHTTP", "MCPServerStdio"]
