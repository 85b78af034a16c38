"""What ``tether run`` stores with a run so that ``tether resume`` rebuilds the same agent.

The config (model spec, ``--tools`` specs, whether the demo tools are on, the file reader's
root, the system prompt) is kept in the run's agent state under the reserved key
``tether.cli``: it is then part of every head and step row, travels with forks and exports,
and needs no change to the store.
"""

from __future__ import annotations

import importlib
import os
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..agent import Agent
from ..errors import ConfigurationError
from ..tools.base import Tool
from .demo_tools import demo_tools
from .models import parse_model

CONFIG_KEY = "tether.cli"
DEMO_SYSTEM_PROMPT = (
    "You are a helpful assistant. Use the calculator tool for arithmetic, current_time for the date and time, and read_file to read a file."
)
"""The system prompt of a run with the demo tools and no ``--system`` (small models need the hint)."""


@dataclass
class RunConfig:
    """The CLI agent of one run (JSON-ready)."""

    model: str
    tools: list[str] = field(default_factory=list)
    demo_tools: bool = True
    root: str = "."
    system: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_state(cls, state: dict[str, Any] | None) -> RunConfig | None:
        """The config stored in a run's state, or None (a run not started by ``tether run``)."""
        data = (state or {}).get(CONFIG_KEY)
        if not isinstance(data, dict) or not isinstance(data.get("model"), str):
            return None
        return cls(
            model=data["model"],
            tools=[str(spec) for spec in data.get("tools") or []],
            demo_tools=bool(data.get("demo_tools", True)),
            root=str(data.get("root") or "."),
            system=data.get("system"),
        )


def load_tools(spec: str) -> list[Any]:
    """The tools named by ``module:attr`` (a tool, or a list/tuple of tools)."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ConfigurationError(f"--tools {spec!r}: expected module:attr, e.g. --tools mytools:TOOLS")
    if os.getcwd() not in sys.path:
        sys.path.append(os.getcwd())  # like `python -m`: modules next to the user are importable
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise ConfigurationError(f"--tools {spec!r}: cannot import module {module_name!r} ({type(exc).__name__}: {exc})") from None
    try:
        value = getattr(module, attr)
    except AttributeError:
        raise ConfigurationError(f"--tools {spec!r}: module {module_name!r} has no attribute {attr!r}") from None
    items = list(value) if isinstance(value, list | tuple) else [value]
    for item in items:
        if not (isinstance(item, Tool) or callable(item)):
            raise ConfigurationError(f"--tools {spec!r}: {item!r} is not a tool (use @tool functions, Tool instances or a list of them)")
    return items


def build_agent(config: RunConfig, store: Any) -> Agent:
    """The agent ``config`` describes, bound to ``store`` (its state carries the config)."""
    tools: list[Any] = demo_tools(Path(config.root)) if config.demo_tools else []
    for spec in config.tools:
        tools.extend(load_tools(spec))
    return Agent(
        model=parse_model(config.model),
        tools=tools,
        system_prompt=config.system,
        store=store,
        state={CONFIG_KEY: config.to_dict()},
        name="tether-cli",
    )
