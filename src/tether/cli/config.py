"""The agent of a ``tether`` command, and the hint a run keeps of how it was created.

A run store is data: anyone who can write a row must not be able to choose code, endpoints or
permissions for the user who later continues the run. So:

- The agent is built only from what the user passes, the same way for every command that
  builds one (``tether run``, ``tether run --run-id EXISTING``, ``tether resume``): tool
  modules from ``--tools``, the model spec from ``--model`` / ``$TETHER_MODEL`` / the default
  (a spec may name an endpoint that receives the API key), the demo tools unless
  ``--no-demo-tools``, the file reader's root from ``--root`` or the current directory.
- ``tether run`` stores that config in the run's agent state under the reserved key
  ``tether.cli`` (it is then part of every head and step row, travels with forks and exports,
  and needs no change to the store). It is a *hint* only: it records how the run was created
  and is never imported, parsed into a model, or used as a root.
- A command that continues an existing run compares the user's config with the hint and
  refuses when they differ (:func:`check_hint`), naming the exact flags the run was created
  with, so a run is not silently continued with other tools, another model or another root.
  One narrowing is taken without asking: with no ``--root``, a run created in a directory
  inside the current one keeps that directory as its root (:func:`keep_root`), so ``tether
  resume RUN`` works from any directory above the run's; the root the current directory
  grants by default already contains it, so the row cannot widen what ``read_file`` reads.
  ``--ignore-stored-config`` skips the comparison and uses the user's flags as they are. A
  ``tether.cli`` entry that is not a well-formed hint (a damaged or tampered row) is refused
  the same way. The hint is not rewritten when a run is continued with other flags: it keeps
  saying how the run was created, and ``tether show RUN`` displays it.
- The system prompt is conversation data, not code or routing: it is part of the run's state
  (the head's ``system_prompt``) and an existing run keeps it; ``--system`` applies to new runs.
  The hint's ``system`` field is informational and never compared.
"""

from __future__ import annotations

import importlib
import os
import shlex
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..agent import Agent
from ..errors import ConfigurationError
from ..models.base import Model
from ..tools.base import Tool
from .demo_tools import demo_tools
from .models import parse_model, resolve_spec, spec_origin

CONFIG_KEY = "tether.cli"
DEMO_SYSTEM_PROMPT = (
    "You are a helpful assistant. Use the calculator tool for arithmetic, current_time for the date and time, and read_file to read a file."
)
"""The system prompt of a run with the demo tools and no ``--system`` (small models need the hint)."""

IGNORE_FLAG = "--ignore-stored-config"


@dataclass
class RunConfig:
    """The CLI agent of one run (JSON-ready): what ``tether run`` stores as the run's hint."""

    model: str
    tools: list[str] = field(default_factory=list)
    demo_tools: bool = True
    root: str = "."
    system: str | None = None
    max_tokens: int | None = None
    """``--max-tokens``: the model's cap on one reply. Not part of the hint (a run may be resumed
    with a higher cap than it was created with), but printed in the commands that continue it."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON object stored under :data:`CONFIG_KEY` (the hint: ``max_tokens`` left out)."""
        data = asdict(self)
        del data["max_tokens"]
        return data

    def flags(self) -> list[str]:
        """The command-line flags that ask for this config (``--root`` only with the demo tools)."""
        flags = ["--model", self.model]
        for spec in self.tools:
            flags += ["--tools", spec]
        flags += ["--root", self.root] if self.demo_tools else ["--no-demo-tools"]
        if self.max_tokens is not None:
            flags += ["--max-tokens", str(self.max_tokens)]
        return flags

    @classmethod
    def from_state(cls, state: Any, run_id: str = "?") -> RunConfig | None:
        """The hint stored in a run's state; None when it has none (a run not made by ``tether run``).

        A ``tether.cli`` entry of the wrong shape raises :class:`ConfigurationError`: the row
        is damaged or was tampered with, and guessing what it meant is not safe.
        """
        if state is None:
            return None
        if not isinstance(state, dict):
            raise ConfigurationError(f"run {run_id!r}: its state is not a JSON object; the row is damaged")
        if CONFIG_KEY not in state:
            return None
        data = state[CONFIG_KEY]
        tools = data.get("tools", []) if isinstance(data, dict) else None
        system = data.get("system") if isinstance(data, dict) else None
        if (
            not isinstance(data, dict)
            or not isinstance(data.get("model"), str)
            or not isinstance(tools, list)
            or not all(isinstance(spec, str) for spec in tools)
            or not isinstance(data.get("demo_tools", True), bool)
            or not isinstance(data.get("root", "."), str)
            or not (system is None or isinstance(system, str))
        ):
            raise ConfigurationError(
                f"run {run_id!r}: its stored {CONFIG_KEY!r} hint is malformed (the row is damaged or was edited); "
                f"pass your flags with {IGNORE_FLAG}"
            )
        return cls(
            model=data["model"], tools=list(tools), demo_tools=data.get("demo_tools", True), root=data.get("root", "."), system=system
        )


def user_config(
    model: str | None,
    tools: Sequence[str],
    no_demo_tools: bool,
    root: str | None,
    system: str | None = None,
    max_tokens: int | None = None,
) -> RunConfig:
    """The config the user asked for: flags, then ``$TETHER_MODEL``, then defaults (never a stored run)."""
    return RunConfig(
        model=resolve_spec(model),
        tools=list(tools),
        demo_tools=not no_demo_tools,
        root=str(Path(root).resolve()) if root else os.getcwd(),
        system=system,
        max_tokens=max_tokens,
    )


def differences(mine: RunConfig, hint: RunConfig) -> list[str]:
    """The flags on which ``mine`` differs from ``hint`` (the root counts only with the demo tools)."""
    found: list[str] = []
    if mine.model != hint.model:
        found.append("--model")
    if mine.tools != hint.tools:
        found.append("--tools")
    if mine.demo_tools != hint.demo_tools:
        found.append("--no-demo-tools")
    elif mine.demo_tools and os.path.normpath(mine.root) != os.path.normpath(hint.root):
        found.append("--root")
    return found


def keep_root(mine: RunConfig, hint: RunConfig | None, root_flag: str | None) -> None:
    """Without ``--root``, continue a run with the root it was created with when that is inside
    the current directory (``mine.root``, the default root); ``mine`` is changed in place.

    The stored root only ever *narrows* the default: a directory inside the current one grants
    ``read_file`` a subset of what the current directory would. It must be absolute, already
    resolved (no symlink, no ``..``: the form ``tether run`` stores) and an existing directory;
    anything else is left to :func:`check_hint`, which refuses and names ``--root``.
    """
    if root_flag is not None or hint is None or not (mine.demo_tools and hint.demo_tools):
        return
    stored = Path(hint.root)
    try:
        if not stored.is_absolute() or stored.resolve(strict=True) != stored or not stored.is_dir():
            return
    except (OSError, RuntimeError):  # missing, unreadable, a symlink loop
        return
    if stored.is_relative_to(Path(mine.root).resolve()):
        mine.root = hint.root


def check_hint(
    mine: RunConfig, hint: RunConfig | None, run_id: str, command: str, model_flag: str | None, *, root_from_cwd: bool = False
) -> None:
    """Refuse to continue ``run_id`` with a config other than the one it was created with.

    Raises :class:`ConfigurationError` naming the stored flags and the user's differing ones.
    No hint (a run the SDK made) means nothing to compare. ``root_from_cwd``: the user gave no
    ``--root`` (the root is the current directory, and the message says so).
    """
    if hint is None:
        return
    found = differences(mine, hint)
    if not found:
        return
    yours: list[str] = []
    for flag in found:
        if flag == "--model":
            origin = spec_origin(model_flag)
            yours.append(f"--model {quoted(mine.model)}" + {"--model": "", "default": " (the default)"}.get(origin, f" (from {origin})"))
        elif flag == "--tools":
            yours.append(_tools_text(mine.tools))
        elif flag == "--no-demo-tools":
            yours.append("--no-demo-tools" if not mine.demo_tools else "no --no-demo-tools")
        else:
            yours.append(f"--root {quoted(mine.root)}" + (" (the current directory)" if root_from_cwd else ""))
    raise ConfigurationError(
        f"run {run_id!r} was created with {shown(hint.flags())}; pass the same to {command} "
        f"(yours: {', '.join(yours)}), or {IGNORE_FLAG} to use yours"
    )


def _tools_text(tools: list[str]) -> str:
    return "no --tools" if not tools else shown([part for spec in tools for part in ("--tools", spec)])


def quoted(value: str) -> str:
    """``value`` as a shell word, with control characters escaped (it may come from a row)."""
    return shlex.quote(value) if value.isprintable() else repr(value)


def shown(words: Sequence[str]) -> str:
    """Words as a shell command line that is safe to print (see :func:`quoted`)."""
    return " ".join(quoted(word) for word in words)


def load_tools(spec: str) -> list[Any]:
    """The tools named by ``module:attr`` (a tool, or a list/tuple of tools); only ever a user's ``--tools``."""
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


def agent_tools(config: RunConfig) -> list[Any]:
    """The tools ``config`` asks for: the demo tools (unless turned off), then every ``--tools``."""
    tools: list[Any] = demo_tools(Path(config.root)) if config.demo_tools else []
    for spec in config.tools:
        tools.extend(load_tools(spec))
    return tools


def build_agent(
    config: RunConfig, store: Any, *, model: Model | None = None, tools: list[Any] | None = None, run_id: str | None = None
) -> Agent:
    """The agent ``config`` describes, bound to ``store``.

    ``config`` must be the user's (:func:`user_config`), never a stored hint. A new run starts
    with the config in its state (the hint); an existing run keeps its own state and system prompt.
    ``model`` and ``tools``, when given, must be what ``config`` names (:func:`parse_model`,
    :func:`agent_tools`): ``tether resume --stalled`` builds them once for all its runs, so a
    local model is loaded once. ``run_id`` names the existing run the agent continues: the
    agent is built with that run's system prompt (a durable run takes its agent's prompt, see
    the guide "Upgrading agents with runs in flight", so the CLI's agent carries the run's own).
    """
    system: Any = config.system
    head = None if run_id is None else store.head(run_id)
    if head is not None:
        system = head.get("system_prompt")
    return Agent(
        model=parse_model(config.model, config.max_tokens) if model is None else model,
        tools=agent_tools(config) if tools is None else list(tools),
        system_prompt=system,
        store=store,
        state={CONFIG_KEY: config.to_dict()},
        name="tether-cli",
    )
