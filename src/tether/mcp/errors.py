"""The errors of MCP tool sources: one class, carrying the server's name and stderr tail."""

from __future__ import annotations

from ..errors import ToolError


class MCPError(ToolError):
    """An MCP server could not be started, reached, listed or called.

    Raised from ``start``/``list_tools`` (the invocation fails before any model call); a failed
    *call* becomes an error tool result with this message instead, so the model sees it. The
    message names the server and, for a stdio server, ends with the tail of its stderr.

    Attributes:
        server: The source's name (``name=`` or derived from the command/URL).
        stderr_tail: The last lines the server wrote to stderr ("" if none or not a stdio server).
    """

    def __init__(self, server: str, message: str, *, stderr_tail: str = "") -> None:
        text = f"MCP server {server!r}: {message}"
        if stderr_tail:
            text += f"\n--- last stderr of {server!r} ---\n{stderr_tail}"
        super().__init__(text)
        self.server = server
        self.stderr_tail = stderr_tail


class RetryRefused(Exception):
    """The server answered the retry of a multi-round-trip call (answers plus the echoed
    ``requestState``) with a JSON-RPC error; turned into a
    :class:`~tether.errors.HandleRejectedError` naming the run and the call."""


class TaskRefused(Exception):
    """The server answered ``tasks/get`` or ``tasks/cancel`` with a JSON-RPC error."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


__all__ = ["MCPError", "RetryRefused", "TaskRefused"]
