"""The built-in tools: a calculator that never evaluates code, a file reader that stays in its root."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tether.cli.demo_tools import calculator, confined, current_time, demo_tools, evaluate, file_reader
from tether.tools.context import ToolContext


async def call(tool: Any, **arguments: Any) -> dict[str, Any]:
    use: Any = {"toolUseId": "t", "name": tool.tool_name, "input": arguments}
    result: dict[str, Any] = await tool.invoke(use, ToolContext(tool_use=use, agent=None, invocation_state={}))  # type: ignore[arg-type]
    return result


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("12 * 34 + 5", 413),
        ("2 * (3 + 4)", 14),
        ("-3 ** 2", -9),
        ("7 // 2 + 7 % 2", 4),
        ("1 / 4", 0.25),
        ("2 ** 10", 1024),
        ("+1.5 * -2", -3.0),
    ],
)
def test_calculator_computes(expression: str, value: float) -> None:
    assert evaluate(expression) == value


@pytest.mark.parametrize(
    ("expression", "problem"),
    [
        ("__import__('os').system('echo pwned')", "not Call"),
        ("__import__", "not Name"),
        ("(1).__class__", "not Attribute"),
        ("lambda: 1", "not Lambda"),
        ("[1, 2]", "not List"),
        ("'a' * 3", "not Constant"),
        ("True + 1", "not Constant"),
        ("9 ** 9 ** 9", "exponents are limited"),
        ("10 ** 200", "too large"),
        ("1 / 0", "division by zero"),
        ("(-8) ** 0.5", "not a real number"),
        ("1e999 - 1", "not finite"),
        ("1 +", "is not an arithmetic expression"),
        ("1" * 201, "longer than 200"),
    ],
)
def test_calculator_refuses(expression: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        evaluate(expression)


async def test_calculator_tool_answers_and_reports_errors() -> None:
    assert (await call(calculator, expression="12 * 34 + 5"))["content"] == [{"text": "413"}]
    assert (await call(calculator, expression="3 / 2 * 2"))["content"] == [{"text": "3"}]
    refused = await call(calculator, expression="__import__('os')")
    assert refused["status"] == "error" and "not Call" in refused["content"][0]["text"]


async def test_current_time_is_utc_iso() -> None:
    text = (await call(current_time))["content"][0]["text"]
    assert datetime.fromisoformat(text).utcoffset() is not None and text.endswith("+00:00")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    base = tmp_path / "root"
    (base / "sub").mkdir(parents=True)
    (base / "note.txt").write_text("hello from the root\n")
    (base / "sub" / "deep.txt").write_text("deep")
    (tmp_path / "secret.txt").write_text("outside")
    return base


async def test_file_reader_reads_inside_the_root(root: Path) -> None:
    reader = file_reader(root)
    assert (await call(reader, path="note.txt"))["content"] == [{"text": "hello from the root\n"}]
    assert (await call(reader, path="sub/deep.txt"))["content"] == [{"text": "deep"}]
    assert (await call(reader, path="sub/../note.txt"))["status"] == "success"
    assert (await call(reader, path=str(root / "note.txt")))["status"] == "success"  # absolute, but inside


@pytest.mark.parametrize("path", ["../secret.txt", "sub/../../secret.txt", "/etc/passwd", "SECRET_ABS"])
async def test_file_reader_refuses_escapes(root: Path, path: str) -> None:
    if path == "SECRET_ABS":
        path = str(root.parent / "secret.txt")
    result = await call(file_reader(root), path=path)
    assert result["status"] == "error" and "outside the allowed directory" in result["content"][0]["text"]
    assert "outside" != result["content"][0]["text"]  # the file's content never comes back


async def test_file_reader_refuses_symlinks_out_and_missing_files(root: Path) -> None:
    os.symlink(root.parent / "secret.txt", root / "link.txt")
    result = await call(file_reader(root), path="link.txt")
    assert result["status"] == "error" and "outside the allowed directory" in result["content"][0]["text"]
    missing = await call(file_reader(root), path="nope.txt")
    assert missing["status"] == "error" and "is not a file" in missing["content"][0]["text"]
    assert (await call(file_reader(root), path="sub"))["status"] == "error"


def test_confined_and_the_tool_set(root: Path) -> None:
    assert confined(root, ".") == root.resolve()
    with pytest.raises(ValueError, match="outside"):
        confined(root, "..")
    assert [tool.tool_name for tool in demo_tools(root)] == ["calculator", "current_time", "read_file"]
