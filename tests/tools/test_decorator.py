"""`@tool`: schema from type hints and docstring, sync/async functions, the ToolContext parameter."""

from __future__ import annotations

import asyncio
from enum import StrEnum
from typing import Annotated, Any, Literal

import pydantic
import pytest

from tether import Agent, ToolContext, ToolError, tool
from tether.tools.context import ToolContext as ContextClass
from tether.tools.decorator import FunctionTool, parse_docstring
from tether.types import ToolUse


class Unit(StrEnum):
    C = "celsius"
    F = "fahrenheit"


class Place(pydantic.BaseModel):
    city: str
    country: str = "NO"


def context_for(use: ToolUse) -> ToolContext:
    return ToolContext(tool_use=use, agent=Agent())


async def invoke(t: FunctionTool, input: Any, tool_use_id: str = "t1") -> Any:
    use: ToolUse = {"toolUseId": tool_use_id, "name": t.tool_name, "input": input}
    return await t.invoke(use, context_for(use))


def test_schema_from_hints_and_google_docstring() -> None:
    @tool
    def forecast(place: Place, days: int, unit: Unit = Unit.C, detail: Literal["short", "long"] = "short", note: str | None = None) -> str:
        """Get the weather forecast.

        Uses the best available source.

        Args:
            place: Where to forecast.
            days: How many days ahead,
                counted from today.
            unit: Temperature unit.

        Returns:
            The forecast text.
        """
        return ""

    spec = forecast.spec
    assert spec["name"] == "forecast"
    assert spec["description"] == "Get the weather forecast.\n\nUses the best available source."
    schema = spec["inputSchema"]["json"]
    assert schema["type"] == "object"
    assert "title" not in schema
    assert sorted(schema["required"]) == ["days", "place"]
    props = schema["properties"]
    assert props["days"] == {"type": "integer", "description": "How many days ahead, counted from today."}
    assert props["place"]["description"] == "Where to forecast."
    assert props["detail"]["enum"] == ["short", "long"] and props["detail"]["default"] == "short"
    assert props["unit"]["description"] == "Temperature unit."
    assert "note" in props and "description" not in props["note"]
    assert "Place" in schema["$defs"] and "Unit" in schema["$defs"]


def test_sphinx_docstring() -> None:
    @tool
    def lookup(key: str, limit: int = 10) -> str:
        """Look a key up.

        :param key: The key to find.
        :param int limit: At most this many
            results.
        """
        return key

    props = lookup.spec["inputSchema"]["json"]["properties"]
    assert lookup.spec["description"] == "Look a key up."
    assert props["key"]["description"] == "The key to find."
    assert props["limit"]["description"] == "At most this many results."


def test_parse_docstring_edge_cases() -> None:
    assert parse_docstring(None) == ("", {})
    assert parse_docstring("Just a line.") == ("Just a line.", {})
    description, params = parse_docstring("Do it.\n\nArgs:\n    x (int): The x.\n    *args: Ignored.\n\nRaises:\n    ValueError: never")
    assert description == "Do it."
    assert params == {"x": "The x.", "args": "Ignored."}


def test_no_docstring_uses_the_name_and_overrides_win() -> None:
    @tool
    def bare(x: int) -> int:
        return x

    assert bare.spec["description"] == "bare"

    @tool(name="renamed", description="Custom.")
    def original(x: int) -> int:
        """Ignored."""
        return x

    assert original.spec["name"] == "renamed" and original.tool_name == "renamed"
    assert original.spec["description"] == "Custom."
    assert repr(original) == "FunctionTool('renamed')"


def test_context_parameter_is_left_out_of_the_schema_and_filled_in() -> None:
    seen: list[ContextClass] = []

    @tool
    def whoami(name: str, context: ToolContext) -> str:
        """Say who called.

        Args:
            name: A name.
            context: Not in the schema.
        """
        seen.append(context)
        return f"{name} via {context.tool_use['toolUseId']}"

    schema = whoami.spec["inputSchema"]["json"]
    assert list(schema["properties"]) == ["name"]
    assert schema["required"] == ["name"]
    result = asyncio.run(invoke(whoami, {"name": "ada"}, "call-9"))
    assert result == {"toolUseId": "call-9", "status": "success", "content": [{"text": "ada via call-9"}]}
    assert seen[0].tool_use["input"] == {"name": "ada"}
    assert isinstance(seen[0].agent, Agent)


def test_context_parameter_may_have_any_name() -> None:
    @tool
    def peek(ctx: ToolContext) -> str:
        return ctx.tool_use["name"]

    assert peek.spec["inputSchema"]["json"]["properties"] == {}
    assert asyncio.run(invoke(peek, {}))["content"] == [{"text": "peek"}]


async def test_async_tool() -> None:
    @tool
    async def later(x: int) -> int:
        await asyncio.sleep(0)
        return x * 2

    assert (await invoke(later, {"x": 21}))["content"] == [{"json": 42}]


async def test_input_is_validated_and_coerced() -> None:
    @tool(run_in_thread=False)
    def typed(place: Place, n: int, flag: bool = False) -> dict[str, Any]:
        assert isinstance(place, Place)
        return {"city": place.city, "n": n, "flag": flag}

    ok = await invoke(typed, {"place": {"city": "Oslo"}, "n": "3"})
    assert ok["content"] == [{"json": {"city": "Oslo", "n": 3, "flag": False}}]
    bad = await invoke(typed, {"place": {}, "n": "three"})
    assert bad["status"] == "error"
    text = bad["content"][0]["text"]
    assert text.startswith("Invalid input for tool 'typed': ")
    assert "place.city: Field required" in text
    assert "n: Input should be a valid integer" in text
    not_object = await invoke(typed, ["not", "an", "object"])
    assert not_object["status"] == "error" and "Invalid input" in not_object["content"][0]["text"]


async def test_annotated_field_descriptions() -> None:
    @tool
    def described(x: Annotated[int, pydantic.Field(description="From Annotated.", ge=0)]) -> int:
        return x

    prop = described.spec["inputSchema"]["json"]["properties"]["x"]
    assert prop["minimum"] == 0
    bad = await invoke(described, {"x": -1})
    assert bad["status"] == "error" and "greater than or equal to 0" in bad["content"][0]["text"]


def test_direct_call_runs_the_function() -> None:
    @tool
    def double(x: int) -> int:
        return 2 * x

    assert double(4) == 8


def test_options() -> None:
    @tool(idempotent=False, run_in_thread=False)
    def charge(amount: int) -> str:
        return "charged"

    assert charge.idempotent is False and charge.run_in_thread is False

    @tool
    def defaults() -> str:
        return ""

    assert defaults.idempotent is True and defaults.run_in_thread is True


@pytest.mark.parametrize("name", ["has space", "", "x" * 65, "dots.not.allowed"])
def test_invalid_names_are_refused(name: str) -> None:
    with pytest.raises(ToolError, match="invalid"):
        tool(name=name)(lambda: None)


def test_var_args_are_refused() -> None:
    def star(*args: int) -> None: ...

    def kw(**kwargs: int) -> None: ...

    for func in (star, kw):
        with pytest.raises(ToolError, match=r"\*args/\*\*kwargs"):
            tool(func)


def test_types_without_json_schema_are_refused() -> None:
    class Opaque:
        pass

    def takes(x: Opaque) -> None: ...

    with pytest.raises(ToolError, match="takes"):
        tool(takes)


def test_unresolvable_hints_are_refused() -> None:
    def broken(x: NotDefinedAnywhere) -> None: ...  # type: ignore[name-defined]  # noqa: F821

    with pytest.raises(ToolError, match="type hints of tool 'broken'"):
        tool(broken)


async def test_any_parameter_name_works(recwarn: pytest.WarningsRecorder) -> None:
    @tool(run_in_thread=False)
    def clashing(json: str, schema: int, model_config: str = "m", _private: int = 1, p0: str = "z") -> str:
        """Names that collide with pydantic's own.

        Args:
            json: Some JSON text.
        """
        return f"{json}|{schema}|{model_config}|{_private}|{p0}"

    assert not [w for w in recwarn if "shadows" in str(w.message)]
    schema = clashing.spec["inputSchema"]["json"]
    assert list(schema["properties"]) == ["json", "schema", "model_config", "_private", "p0"]
    assert schema["properties"]["json"]["description"] == "Some JSON text."
    assert schema["required"] == ["json", "schema"]
    result = await invoke(clashing, {"json": "x", "schema": 2, "_private": 5, "p0": "q"})
    assert result["content"] == [{"text": "x|2|m|5|q"}]
    bad = await invoke(clashing, {"json": 1})
    assert bad["content"][0]["text"] == "Invalid input for tool 'clashing': json: Input should be a valid string; schema: Field required"


def test_numpy_docstring() -> None:
    @tool
    def convert(amount: float, currency: str = "EUR") -> str:
        """Convert an amount of money.

        Uses the day's rate.

        Parameters
        ----------
        amount : float
            How much, in US dollars,
            before fees.
        currency : str, optional
            The ISO code to convert to.

        Returns
        -------
        str
            The converted amount.
        """
        return f"{amount} {currency}"

    props = convert.spec["inputSchema"]["json"]["properties"]
    assert convert.spec["description"] == "Convert an amount of money.\n\nUses the day's rate."
    assert props["amount"]["description"] == "How much, in US dollars, before fees."
    assert props["currency"]["description"] == "The ISO code to convert to."


def test_rest_docstring_with_types_and_returns() -> None:
    @tool
    def search(query: str, limit: int = 5) -> list[str]:
        """Search the catalogue.

        :param query: Words to look for.
        :type query: str
        :param limit: At most this many
            hits.
        :returns: The matching titles.
        :rtype: list[str]
        """
        return [query] * limit

    props = search.spec["inputSchema"]["json"]["properties"]
    assert search.spec["description"] == "Search the catalogue."
    assert props["query"]["description"] == "Words to look for."
    assert props["limit"]["description"] == "At most this many hits."


def test_a_malformed_docstring_still_describes_the_tool() -> None:
    assert parse_docstring("Odd one.\n\n:param: nothing named")[0].startswith("Odd one.")
