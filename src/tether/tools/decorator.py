"""``@tool``: a function becomes a tool whose JSON schema comes from its type hints and docstring."""

from __future__ import annotations

import asyncio
import inspect
import re
from collections.abc import Callable
from typing import Any, TypeVar, get_type_hints, overload

import pydantic

from ..errors import ToolError
from ..types import ToolSpec
from .base import Tool
from .compensation import Compensate, checked_compensation
from .context import ToolContext

F = TypeVar("F", bound=Callable[..., Any])


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """The description and the per-parameter descriptions of a docstring.

    Google (``Args:``), NumPy (``Parameters`` / ``----------``) and reST/Sphinx (``:param x:``)
    styles are recognised (by ``docstring_parser``). The description is the text before the
    first section; a parameter's description is its text with the lines joined; ``*args`` and
    ``**kwargs`` are named without their stars.

    Args:
        doc: The docstring (``func.__doc__``), or None.

    Returns:
        ``(description, {parameter name: description})``.
    """
    if not doc or not doc.strip():
        return "", {}
    import docstring_parser  # imported by the first @tool, not by ``import tether``

    try:
        parsed = docstring_parser.parse(doc)
    except docstring_parser.ParseError:
        return inspect.cleandoc(doc).strip(), {}  # a malformed section: the whole text still describes the tool
    description = "\n\n".join(part.strip() for part in (parsed.short_description, parsed.long_description) if part and part.strip())
    params = {param.arg_name.lstrip("*"): " ".join((param.description or "").split()) for param in parsed.params}
    return description, params


class FunctionTool(Tool):
    """A tool made from a plain (sync or async) function by ``@tool``."""

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        idempotent: bool = True,
        transactional: bool = False,
        run_in_thread: bool = True,
        compensate: Compensate | None = None,
    ) -> None:
        self.func = func
        self._name = name or func.__name__
        if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", self._name):
            raise ToolError(f"tool name {self._name!r} is invalid: use 1-64 letters, digits, '_' or '-' (providers require it)")
        doc_description, param_docs = parse_docstring(func.__doc__)
        self._description = description or doc_description or self._name
        self.idempotent = idempotent
        self.transactional = transactional
        self.run_in_thread = run_in_thread
        self.compensate = checked_compensation(compensate, self._name)
        self._is_async = inspect.iscoroutinefunction(func)
        self._context_param: str | None = None
        try:
            hints = get_type_hints(func, include_extras=True)
        except Exception as exc:
            raise ToolError(f"cannot read the type hints of tool {self._name!r}: {exc}") from exc
        fields: dict[str, Any] = {}
        for param in inspect.signature(func).parameters.values():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise ToolError(f"tool {self._name!r}: *args/**kwargs parameters are not supported")
            annotation = hints.get(param.name, Any)
            if annotation is ToolContext:
                self._context_param = param.name
                continue
            default = ... if param.default is param.empty else param.default
            # Fields get neutral names and the parameter name as alias, so any parameter name
            # works (``json``, ``schema``, ``model_config`` or ``_x`` would clash with pydantic).
            fields[f"p{len(fields)}"] = (
                annotation,
                pydantic.Field(default=default, alias=param.name, description=param_docs.get(param.name)),
            )
        model_name = "".join(part.capitalize() for part in re.split(r"[_-]", self._name)) + "Input"
        try:
            self._model: type[pydantic.BaseModel] = pydantic.create_model(
                model_name, __config__=pydantic.ConfigDict(arbitrary_types_allowed=False), **fields
            )
            schema = self._model.model_json_schema()
        except (pydantic.PydanticSchemaGenerationError, TypeError) as exc:
            raise ToolError(f"tool {self._name!r}: a parameter type cannot be expressed as JSON schema: {exc}") from exc
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            prop.pop("title", None)
        self._field_names = tuple((field, info[1].alias) for field, info in fields.items())
        self._spec_value: ToolSpec = {
            "name": self._name,
            "description": self._description,
            "inputSchema": {"json": schema},
        }

    @property
    def tool_name(self) -> str:
        return self._name

    @property
    def spec(self) -> ToolSpec:
        return self._spec_value

    def _prepare(self, raw: Any) -> Any:
        validated = self._model.model_validate(raw)
        return {param: getattr(validated, field) for field, param in self._field_names}

    async def _call(self, prepared: Any, context: ToolContext) -> Any:
        if self._context_param is not None:
            prepared[self._context_param] = context
        if self._is_async:
            return await self.func(**prepared)
        if self.run_in_thread:
            return await asyncio.to_thread(self.func, **prepared)
        return self.func(**prepared)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the underlying function directly (handy in tests)."""
        return self.func(*args, **kwargs)

    def __repr__(self) -> str:
        return f"FunctionTool({self._name!r})"


@overload
def tool(func: Callable[..., Any], /) -> FunctionTool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    idempotent: bool = True,
    transactional: bool = False,
    run_in_thread: bool = True,
    compensate: Compensate | None = None,
) -> Callable[[Callable[..., Any]], FunctionTool]: ...


def tool(
    func: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    idempotent: bool = True,
    transactional: bool = False,
    run_in_thread: bool = True,
    compensate: Compensate | None = None,
) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
    """Make a tool from a function: ``@tool`` or ``@tool(name=..., idempotent=False)``.

    The schema comes from the type hints (via pydantic) and the parameter descriptions from the
    docstring (Google ``Args:``, NumPy ``Parameters`` or reST ``:param x:``, see
    :func:`parse_docstring`); the description is the docstring's text before them. A
    parameter annotated ``ToolContext`` receives the call's context and is not in the schema.
    Sync functions run in a worker thread unless ``run_in_thread=False``.

    Args:
        func: The function (when used as a bare ``@tool``).
        name: The tool's name (default: the function's), 1-64 letters, digits, ``_``, ``-``.
        description: What the tool does, for the model (default: from the docstring).
        idempotent: False for a tool that must not run twice blindly (a payment): after a
            crash, an in-doubt call of it is reconciled or asked about instead of re-run.
        transactional: True for a tool that writes its effects through
            ``context.transaction()`` (the PostgreSQL outbox of :mod:`tether.effects`): they
            commit with its recorded result, so an in-doubt call runs again (no reconcile)
            whatever ``idempotent`` says.
        run_in_thread: Run a sync function in a worker thread (False: on the event loop).
        compensate: How a performed call is undone when its durable run is compensated: a
            callable taking an :class:`~tether.tools.compensation.Undo` (the call's input,
            recorded result and idempotency key), sync or async. Part of the tool's contract
            (its manifest entry names it). See :mod:`tether.tools.compensation`.

    Returns:
        The tool, or a decorator making one.
    """

    def wrap(f: Callable[..., Any]) -> FunctionTool:
        return FunctionTool(
            f,
            name=name,
            description=description,
            idempotent=idempotent,
            transactional=transactional,
            run_in_thread=run_in_thread,
            compensate=compensate,
        )

    if func is not None:
        return wrap(func)
    return wrap
