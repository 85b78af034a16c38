"""Strands' ``@tool`` on Tether: ``name=``, ``description=``, ``inputSchema=``, ``context=``.

The spec (name, description from the docstring without its Args section, a pydantic-built
schema with the docstring's per-parameter descriptions) and the result mapping (a dict with
``status`` and ``content`` passes through; a string is text; anything else is its JSON text,
falling back to ``str``) are Strands'. That mapping differs from Tether's native ``@tool``
(which returns non-string values as ``json`` blocks), which is why this decorator exists beside
:func:`tether.tools.tool` instead of reusing it. The decorated function stays callable directly.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import threading
from collections.abc import Callable
from typing import Annotated, Any, get_args, get_origin, get_type_hints, overload

import pydantic
from pydantic.fields import FieldInfo
from pydantic_core import PydanticSerializationError

from ...errors import TetherError
from ...types import ToolSpec, ToolUse
from ._events import ToolResultEvent, ToolStreamEvent
from .agent_tool import ToolGenerator
from .context import ToolContext
from .tools import FunctionAgentTool

_ARGS_SECTIONS = ("args:", "arguments:", "parameters:", "param:", "params:")
_OTHER_SECTIONS = (
    "returns:", "return:", "yields:", "yield:", "raises:", "raise:", "except:", "exceptions:",
    "examples:", "example:", "note:", "notes:", "see also:", "seealso:", "references:", "ref:",
)  # fmt: skip


class FunctionToolMetadata:
    """What ``@tool`` reads from a function: its parameters (minus the injected ones), their
    descriptions, the input model that validates a call, and the spec."""

    def __init__(self, func: Callable[..., Any], context_param: str | None = None) -> None:
        import docstring_parser  # imported by the first @tool, not by ``import tether.strands``

        self.func = func
        self.signature = inspect.signature(func)
        self.type_hints = get_type_hints(func, include_extras=True)
        self._context_param = context_param
        self._validate_signature()
        self.doc = docstring_parser.parse(inspect.getdoc(func) or "")
        self.param_descriptions = {p.arg_name: p.description or f"Parameter {p.arg_name}" for p in self.doc.params}
        self.input_model = self._create_input_model()

    def _validate_signature(self) -> None:
        for param in self.signature.parameters.values():
            annotation = self.type_hints.get(param.name)
            if (isinstance(annotation, type) and issubclass(annotation, ToolContext)) or get_origin(annotation) is ToolContext:
                if self._context_param is None:
                    raise ValueError("@tool(context) must be set if passing in ToolContext param")
                if param.name != self._context_param:
                    raise ValueError(f"param_name=<{param.name}> | ToolContext param must be named '{self._context_param}'")
                break

    def _is_special_parameter(self, name: str) -> bool:
        return name in {"self", "cls", "agent"} or name == self._context_param

    def _field(self, annotation: Any, name: str, default: Any) -> tuple[Any, FieldInfo]:
        description: str | None = None
        if get_origin(annotation) is Annotated:
            annotation, *metadata = get_args(annotation)
            for meta in metadata:
                if isinstance(meta, str):
                    description = meta
                elif isinstance(meta, FieldInfo):
                    raise NotImplementedError(
                        "Using pydantic.Field within Annotated is not yet supported for tool decorators. "
                        "Please use a simple string for the description, or define constraints in the function's docstring."
                    )
        if description is None:
            description = self.param_descriptions.get(name) or f"Parameter {name}"
        if isinstance(default, FieldInfo):
            if default.description is None:
                return annotation, FieldInfo.merge_field_infos(default, FieldInfo(description=description))
            return annotation, default
        return annotation, pydantic.Field(default=default, description=description)

    def _create_input_model(self) -> type[pydantic.BaseModel]:
        fields: dict[str, Any] = {}
        for name, param in self.signature.parameters.items():
            if self._is_special_parameter(name):
                continue
            annotation = self.type_hints.get(name, param.annotation) if isinstance(param.annotation, str) else param.annotation
            if annotation is inspect.Parameter.empty:
                annotation = Any
            default = ... if param.default is inspect.Parameter.empty else param.default
            fields[name] = self._field(annotation, name, default)
        return pydantic.create_model(f"{self.func.__name__.capitalize()}Tool", **fields)

    def _description(self) -> str:
        doc = inspect.getdoc(self.func)
        if doc:
            lines: list[str] = []
            skipping = False
            for line in doc.strip().split("\n"):
                lowered = line.strip().lower()
                if lowered.startswith(_ARGS_SECTIONS):
                    skipping = True
                    continue
                if lowered.startswith(_OTHER_SECTIONS):
                    skipping = False
                    lines.append(line)
                    continue
                if not skipping:
                    lines.append(line)
            description = "\n".join(lines).strip()
            if description:
                return description
        return self.func.__name__

    def extract_metadata(self) -> ToolSpec:
        """The tool's spec: the function's name, its description and its input schema."""
        schema = self.input_model.model_json_schema()
        _clean_schema(schema)
        return {"name": self.func.__name__, "description": self._description(), "inputSchema": {"json": schema}}

    def validate_input(self, input_data: dict[str, Any]) -> dict[str, Any]:
        """Validate a call's input; raises ``ValueError`` naming what failed."""
        try:
            return self.input_model(**input_data).model_dump()
        except Exception as exc:
            raise ValueError(f"Validation failed for input parameters: {exc}") from exc

    def inject_special_parameters(
        self, validated: dict[str, Any], tool_use: ToolUse, invocation_state: dict[str, Any], tool_context: ToolContext | None = None
    ) -> None:
        """Add the context parameter and ``agent`` (when the function takes them)."""
        if self._context_param and self._context_param in self.signature.parameters:
            if tool_context is None:
                agent = invocation_state["agent"]
                signal = getattr(agent, "cancel_signal", None)
                tool_context = ToolContext(
                    tool_use=tool_use,
                    agent=agent,
                    invocation_state=invocation_state,
                    cancel_signal=signal if isinstance(signal, threading.Event) else threading.Event(),
                )
            validated[self._context_param] = tool_context
        if "agent" in self.signature.parameters and "agent" in invocation_state:
            validated["agent"] = invocation_state["agent"]


def _clean_schema(schema: dict[str, Any]) -> None:
    """Drop pydantic's ``title``/``additionalProperties`` and flatten optional ``anyOf`` (in place)."""
    for key in ("title", "additionalProperties"):
        schema.pop(key, None)
    required = schema.get("required", [])
    for name, prop in schema.get("properties", {}).items():
        any_of = prop.get("anyOf")
        if any_of is not None and name not in required and len(any_of) == 2 and any(item.get("type") == "null" for item in any_of):
            for item in any_of:
                if item.get("type") != "null":
                    prop.update(item)
                    del prop["anyOf"]
                    break
        if "properties" in prop:
            _clean_schema(prop)
        for key in ("title", "additionalProperties"):
            prop.pop(key, None)


def wrap_tool_result(tool_use_id: str, result: Any, exception: Exception | None = None) -> ToolResultEvent:
    """Strands' mapping of a tool function's return value to a ToolResult."""
    if isinstance(result, dict) and "status" in result and "content" in result:
        result["toolUseId"] = tool_use_id
        return ToolResultEvent(result, exception=exception)  # type: ignore[arg-type]
    if isinstance(result, str):
        text = result
    elif isinstance(result, pydantic.BaseModel):
        try:
            text = result.model_dump_json()
        except PydanticSerializationError:
            text = str(result)
    else:
        try:
            text = json.dumps(result, ensure_ascii=False)
        except (TypeError, ValueError):
            text = str(result)
    return ToolResultEvent({"toolUseId": tool_use_id, "status": "success", "content": [{"text": text}]}, exception=exception)


class DecoratedFunctionTool(FunctionAgentTool):
    """A function made a tool by ``@tool``; calling it calls the function."""

    def __init__(self, tool_name: str, tool_spec: ToolSpec, tool_func: Callable[..., Any], metadata: FunctionToolMetadata) -> None:
        super().__init__(tool_name, tool_spec, tool_func)
        self._metadata = metadata
        self.streams_events = inspect.isasyncgenfunction(tool_func)
        functools.update_wrapper(wrapper=self, wrapped=tool_func)

    def __get__(self, instance: Any, owner: type | None = None) -> DecoratedFunctionTool:
        """Bind to ``instance`` when the decorated function is a method."""
        if instance is not None and not inspect.ismethod(self._tool_func):
            return DecoratedFunctionTool(
                self._tool_name, self._tool_spec, self._tool_func.__get__(instance, instance.__class__), self._metadata
            )
        return self

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the function directly, with its own signature."""
        return self._tool_func(*args, **kwargs)

    @property
    def tool_type(self) -> str:
        return "function"

    def get_display_properties(self) -> dict[str, str]:
        return {**super().get_display_properties(), "Function": self._tool_func.__name__}

    async def stream(self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any) -> ToolGenerator:
        """Validate the input, call the function and yield its (mapped) result; an async
        generator function's yields come first, each as a ``tool_stream`` event, its last
        yield being the result."""
        tool_use_id = tool_use.get("toolUseId", "unknown")
        tool_input: dict[str, Any] = tool_use.get("input", {})
        tool_context: ToolContext | None = kwargs.get("_tool_context")
        try:
            validated = self._metadata.validate_input(tool_input)
            self._metadata.inject_special_parameters(validated, tool_use, invocation_state, tool_context)
            if inspect.isasyncgenfunction(self._tool_func):
                last: Any = None
                seen = False
                async for last in self._tool_func(**validated):
                    seen = True
                    yield ToolStreamEvent(tool_use, last)
                if not seen:
                    raise UnboundLocalError("the async generator tool yielded nothing; its last yield is its result")
                yield wrap_tool_result(tool_use_id, last)
            elif inspect.iscoroutinefunction(self._tool_func):
                yield wrap_tool_result(tool_use_id, await self._tool_func(**validated))
            else:
                yield wrap_tool_result(tool_use_id, await asyncio.to_thread(self._tool_func, **validated))
        except Exception as exc:
            # Strands words a ValueError (a failed validation) without its type; a TetherError is
            # a ValueError only in Tether's hierarchy (Strands' ConcurrencyException is not one)
            if isinstance(exc, ValueError) and not isinstance(exc, TetherError):
                text = f"Error: {exc}"
            else:
                text = f"Error: {type(exc).__name__} - {exc}"
            error = {"toolUseId": tool_use_id, "status": "error", "content": [{"text": text}]}
            yield wrap_tool_result(tool_use_id, error, exception=exc)

    def __repr__(self) -> str:
        return f"DecoratedFunctionTool({self._tool_name!r})"


@overload
def tool(func: Callable[..., Any], /) -> DecoratedFunctionTool: ...


@overload
def tool(
    description: str | None = None,
    inputSchema: dict[str, Any] | None = None,
    name: str | None = None,
    context: bool | str = False,
) -> Callable[[Callable[..., Any]], DecoratedFunctionTool]: ...


def tool(  # type: ignore[misc]
    func: Callable[..., Any] | None = None,
    description: str | None = None,
    inputSchema: dict[str, Any] | None = None,
    name: str | None = None,
    context: bool | str = False,
) -> DecoratedFunctionTool | Callable[[Callable[..., Any]], DecoratedFunctionTool]:
    """Make a Strands-style tool from a function: ``@tool`` or ``@tool(name=..., context=True)``.

    Args:
        func: The function (bare ``@tool``).
        description: Overrides the docstring's description.
        inputSchema: Overrides the generated input schema.
        name: Overrides the function's name.
        context: True to pass a :class:`ToolContext` in parameter ``tool_context``, or the name
            of the parameter to pass it in.

    Returns:
        The tool (callable as the function), or a decorator making one.
    """

    def decorator(f: Callable[..., Any]) -> DecoratedFunctionTool:
        if isinstance(context, bool):
            context_param = "tool_context" if context else None
        else:
            context_param = context.strip()
            if not context_param:
                raise ValueError("Context parameter name cannot be empty")
        metadata = FunctionToolMetadata(f, context_param)
        spec = metadata.extract_metadata()
        if name is not None:
            spec["name"] = name
        if description is not None:
            spec["description"] = description
        if inputSchema is not None:
            spec["inputSchema"] = inputSchema  # type: ignore[typeddict-item]  # Strands takes any JSON schema dict here
        tool_name = spec.get("name", f.__name__)
        if not isinstance(tool_name, str):
            raise ValueError(f"Tool name must be a string, got {type(tool_name)}")
        return DecoratedFunctionTool(tool_name, spec, f, metadata)

    if func is None:
        return decorator
    return decorator(func)


__all__ = ["DecoratedFunctionTool", "FunctionToolMetadata", "tool", "wrap_tool_result"]
