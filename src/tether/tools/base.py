"""The tool abstraction: a name, a JSON-schema spec, and an ``invoke`` that never crashes the loop.

Tools come from the ``@tool`` decorator (:mod:`tether.tools.decorator`) or from subclassing
:class:`Tool`. Whatever a tool does — return a value, raise, receive invalid input — the loop
gets a ``toolResult``: errors become error results the model can read and correct.
"""

from __future__ import annotations

import asyncio
import inspect
from abc import ABC
from collections.abc import Callable
from typing import Any, ClassVar

import pydantic

from .._json import json_roundtrip_copy
from ..errors import ShapeError, ToolError
from ..types import ToolResult, ToolResultContent, ToolSpec, ToolUse
from .compensation import Compensate
from .context import ToolContext


def error_result(tool_use_id: str, text: str) -> ToolResult:
    """An error ``toolResult`` carrying ``text``."""
    return {"toolUseId": tool_use_id, "status": "error", "content": [{"text": text}]}


def to_result(tool_use_id: str, value: Any) -> ToolResult:
    """Turn what a tool returned into a ``toolResult`` (JSON-only, copied)."""
    if isinstance(value, str):
        return {"toolUseId": tool_use_id, "status": "success", "content": [{"text": value}]}
    if isinstance(value, dict) and "status" in value and "content" in value:
        status = value["status"]
        if status not in ("success", "error") or not isinstance(value["content"], list):
            return error_result(tool_use_id, "tool returned a malformed toolResult (status/content)")
        try:
            content: list[ToolResultContent] = json_roundtrip_copy(value["content"], "content")
        except ShapeError:
            content = value["content"]  # may hold bytes (images); the snapshot layer encodes them
        return {"toolUseId": tool_use_id, "status": status, "content": content}
    if isinstance(value, pydantic.BaseModel):
        return {"toolUseId": tool_use_id, "status": "success", "content": [{"json": value.model_dump(mode="json")}]}
    if value is None or isinstance(value, (dict, list, int, float, bool)):
        try:
            return {"toolUseId": tool_use_id, "status": "success", "content": [{"json": json_roundtrip_copy(value, "value")}]}
        except ShapeError:
            pass
    return {"toolUseId": tool_use_id, "status": "success", "content": [{"text": str(value)}]}


def validation_message(exc: pydantic.ValidationError) -> str:
    """A compact, model-readable rendering of a pydantic validation error."""
    parts = []
    for err in exc.errors(include_url=False):
        loc = ".".join(str(p) for p in err["loc"]) or "<input>"
        parts.append(f"{loc}: {err['msg']}")
    return "; ".join(parts)


class Tool(ABC):
    """Base class of tools.

    Subclass it with ``name``, ``description`` and either ``input_model`` (a pydantic model) or
    ``input_schema`` (a JSON schema dict), and implement ``run(self, input, context)`` — sync or
    async — returning the result. ``idempotent = False`` marks a tool that must not be re-run
    blindly after a crash left its call in doubt; ``transactional = True`` marks a tool whose
    effects are all written through ``context.transaction()`` (the PostgreSQL outbox), so they
    commit with its result and an in-doubt call simply runs again. ``run_in_thread`` (sync tools only) keeps a
    blocking tool off the event loop. ``streams_events = True`` lets the tool add events to the
    caller's stream while it runs (``ToolContext.emit``). ``nests_runs = True`` marks a tool whose
    call in a durable run is a nested run of its own (an agent tool): the run's timeline names it,
    and calls of it running at once share what is left of the run's budget (``context.budget``).
    ``compensate`` undoes a performed call when its durable run is compensated; a tool that nests
    runs names the tools of its nested run (:meth:`nested_tools`), whose compensations undo the
    nested run's effects when its parent is compensated.
    """

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    input_model: ClassVar[type[pydantic.BaseModel] | None] = None
    input_schema: ClassVar[dict[str, Any] | None] = None
    idempotent: bool = True
    transactional: bool = False
    run_in_thread: bool = True
    streams_events: bool = False
    nests_runs: bool = False
    compensate: Compensate | None = None
    """How a performed call is undone when its durable run is compensated (see
    :mod:`tether.tools.compensation`); set it on the instance (or as a ``staticmethod``)."""

    _spec: ToolSpec | None = None

    def nested_tools(self) -> Callable[[str], Tool | None] | None:
        """For a tool that nests runs (``nests_runs``): its nested runs' tools by name, so
        compensating the parent unwinds a nested run with their compensations; None: none."""
        return None

    @property
    def tool_name(self) -> str:
        return self.name

    def keeps_handle(self, state: dict[str, Any], tool_use_id: str) -> bool:
        """Whether call ``tool_use_id`` left in the run's agent state ``state`` a handle of work
        that outlives the process (an MCP task id, saved with ``ToolContext.save()``): a resumed
        run re-runs such an in-doubt call, which waits for that work instead of starting it
        again. False by default."""
        return False

    @property
    def spec(self) -> ToolSpec:
        """The spec sent to models."""
        if self._spec is None:
            if self.input_model is not None:
                schema = self.input_model.model_json_schema()
            elif self.input_schema is not None:
                schema = dict(self.input_schema)
            else:
                schema = {"type": "object", "properties": {}}
            if not self.tool_name:
                raise ToolError(f"{type(self).__name__} has no name; set the `name` class attribute")
            self._spec = {
                "name": self.tool_name,
                "description": self.description or self.tool_name,
                "inputSchema": {"json": schema},
            }
        return self._spec

    def run(self, input: dict[str, Any], context: ToolContext) -> Any:
        """Do the work; override this (may be ``async def``)."""
        raise NotImplementedError(f"{type(self).__name__}.run is not implemented")

    def _prepare(self, raw: Any) -> Any:
        """Validate the model's input; raises ``pydantic.ValidationError`` or ``ValueError``."""
        if self.input_model is not None:
            return self.input_model.model_validate(raw).model_dump()
        if not isinstance(raw, dict):
            raise ValueError(f"input must be a JSON object, got {type(raw).__name__}")
        return raw

    async def _call(self, prepared: Any, context: ToolContext) -> Any:
        if inspect.iscoroutinefunction(self.run):
            return await self.run(prepared, context)
        if self.run_in_thread:
            return await asyncio.to_thread(self.run, prepared, context)
        return self.run(prepared, context)

    async def invoke(self, tool_use: ToolUse, context: ToolContext) -> ToolResult:
        """Validate, run and wrap; every failure becomes an error result.

        Interrupt signals (a ``BaseException``) pass through to the driver on purpose.
        """
        tool_use_id = tool_use["toolUseId"]
        try:
            prepared = self._prepare(tool_use["input"])
        except pydantic.ValidationError as exc:
            return error_result(tool_use_id, f"Invalid input for tool {self.tool_name!r}: {validation_message(exc)}")
        except ValueError as exc:
            return error_result(tool_use_id, f"Invalid input for tool {self.tool_name!r}: {exc}")
        try:
            value = await self._call(prepared, context)
        except Exception as exc:  # a tool's failure is the model's information, not a crash
            return error_result(tool_use_id, f"Error: {type(exc).__name__}: {exc}")
        return to_result(tool_use_id, value)
