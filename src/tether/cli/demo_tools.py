"""The built-in tools of ``tether run``: a safe calculator, the current time, a confined file reader.

The calculator parses with :mod:`ast` and evaluates only numbers and arithmetic operators (no
names, calls or attributes, so ``__import__('os')`` is refused, not run), with bounds on
exponents and sizes. The file reader resolves every path inside one root directory (symlinks
included) and refuses anything that would leave it.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..tools.base import Tool
from ..tools.decorator import tool

MAX_EXPRESSION = 200
MAX_EXPONENT = 1000
MAX_MAGNITUDE = 10**100
MAX_READ_BYTES = 64_000

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}


def evaluate(expression: str) -> int | float:
    """The value of an arithmetic expression; ``ValueError`` for anything else."""
    if len(expression) > MAX_EXPRESSION:
        raise ValueError(f"the expression is longer than {MAX_EXPRESSION} characters")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError:
        raise ValueError(f"{expression!r} is not an arithmetic expression") from None
    return _eval(tree.body)


def _eval(node: ast.AST) -> int | float:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return _bounded(node.value)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _bounded(_UNARY[type(node.op)](_eval(node.operand)))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > MAX_EXPONENT:
            raise ValueError(f"exponents are limited to {MAX_EXPONENT}")
        try:
            return _bounded(_BINARY[type(node.op)](left, right))
        except ZeroDivisionError:
            raise ValueError("division by zero") from None
        except OverflowError:
            raise ValueError("the result is too large") from None
    raise ValueError(f"only numbers and + - * / // % ** are allowed, not {type(node).__name__}")


def _bounded(value: Any) -> int | float:
    if isinstance(value, complex) or not isinstance(value, int | float):
        raise ValueError("the result is not a real number")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("the result is not finite")
    if abs(value) > MAX_MAGNITUDE:
        raise ValueError("the result is too large")
    return value


@tool
def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression and return the number.

    Args:
        expression: Numbers with + - * / // % ** and parentheses, e.g. "12 * 34 + 5".
    """
    value = evaluate(expression)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)


@tool
def current_time() -> str:
    """The current date and time in UTC, as ISO 8601."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def confined(root: Path, path: str) -> Path:
    """``path`` resolved inside ``root``; ``ValueError`` when it would leave the directory."""
    base = root.resolve()
    target = (base / path).resolve()  # an absolute ``path`` replaces ``base`` here, then is checked
    if target != base and base not in target.parents:
        raise ValueError(f"{path!r} is outside the allowed directory {str(base)!r}; use a path inside it")
    return target


def file_reader(root: Path) -> Tool:
    """A ``read_file`` tool confined to ``root``."""

    @tool
    def read_file(path: str) -> str:
        """Read a text file from the working directory.

        Args:
            path: The file's path, relative to the working directory.
        """
        target = confined(root, path)
        if not target.is_file():
            raise ValueError(f"{path!r} is not a file")
        with target.open("rb") as handle:
            data = handle.read(MAX_READ_BYTES + 1)
        text = data[:MAX_READ_BYTES].decode("utf-8", errors="replace")
        return text + ("\n[... truncated]" if len(data) > MAX_READ_BYTES else "")

    return read_file


def demo_tools(root: Path) -> list[Tool]:
    """The built-in tools, the file reader confined to ``root``."""
    return [calculator, current_time, file_reader(root)]
