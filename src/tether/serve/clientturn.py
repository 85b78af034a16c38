"""What a client brings to a served turn besides its prompt: tools it runs itself, and state.

A front end (an AG-UI client) may offer the model tools that run in the browser, not in the
server: a *client tool* (AG-UI calls them front-end tools). The model sees each one as an
ordinary tool; when it calls one, the call asks the client through Tether's interrupt
machinery: :class:`ClientTool` raises an interrupt named :data:`CLIENT_TOOL` (its reason holds
the tool's name and input), so the run stops ``interrupted`` with the pending call, durably like
any interrupt, and the client's result is the interrupt's answer, which becomes the call's
result when the run is resumed. No protocol keeps run logic of its own: the AG-UI endpoint only
maps a ``tool`` message to the answer of the pending call it names.

The client tools of a turn are stored in the run (the served agent's state, under
:data:`~tether.serve.registry.SERVE_KEY` → ``clientTools``) with the turn's first write, by the
same hook that merges the client's state (:class:`ClientTurnRecorder`), so every later resume of
the run (an answer, a retry, a takeover by another server after a crash) registers the same
tools again (:func:`install`) and the resume check finds the tools the run was interrupted with.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from ..agent import Agent
from ..errors import RequestError
from ..hooks import BeforeInvocation, HookRegistry
from ..tools.base import Tool
from ..tools.context import ToolContext
from ..types import ToolSpec
from .registry import SERVE_KEY

_log = logging.getLogger(__name__)

CLIENT_TOOL = "tether.client_tool"
"""The name of the interrupt a client tool's call raises: the client answers it with the result."""
TOOLS_KEY = "clientTools"
"""Where a run keeps the specs of its client tools, in its ``tether.serve`` state."""


class ClientTool(Tool):
    """A tool the client runs: its call stops the run with a :data:`CLIENT_TOOL` interrupt whose
    answer (the client's result) is the call's result.

    Args:
        spec: The tool's spec (``name``, ``description``, ``inputSchema: {json}``).
    """

    run_in_thread = False

    def __init__(self, spec: ToolSpec) -> None:
        self._spec = spec
        self._name = str(spec["name"])

    @property
    def tool_name(self) -> str:
        return self._name

    def run(self, input: dict[str, Any], context: ToolContext) -> Any:
        """The client's result of this call (the first time: stop the run to ask for it)."""
        return context.interrupt(CLIENT_TOOL, reason={"tool": self._name, "input": input})


def client_spec(name: Any, description: Any, parameters: Any, where: str) -> ToolSpec:
    """A client tool's declaration as a Tether tool spec, or a RequestError naming ``where``.

    Args:
        name: The tool's name (a non-empty string).
        description: What it does (a string, may be empty).
        parameters: Its input's JSON schema (an object; None: no input).
        where: The declaration's place in the request, for errors (``tools[0]``).
    """
    if not isinstance(name, str) or not name.strip():
        raise RequestError(f"{where}.name must be a non-empty string")
    if parameters is None:
        parameters = {"type": "object", "properties": {}}
    if not isinstance(parameters, dict):
        raise RequestError(f"{where}.parameters must be a JSON schema object, got {type(parameters).__name__}")
    return {"name": name, "description": str(description or name), "inputSchema": {"json": parameters}}


def stored_tools(head: Mapping[str, Any] | None) -> list[ToolSpec]:
    """The client tools a stored run recorded with its last turn (none: an empty list)."""
    state = (head or {}).get("state")
    marker = state.get(SERVE_KEY) if isinstance(state, dict) else None
    specs = marker.get(TOOLS_KEY) if isinstance(marker, dict) else None
    return [cast(ToolSpec, spec) for spec in specs or [] if isinstance(spec, dict) and isinstance(spec.get("name"), str)]


def install(agent: Agent, specs: list[ToolSpec]) -> None:
    """Register ``specs`` on ``agent`` as client tools; a name the agent's own tools take stays
    the server's (the client's declaration is left out, with a warning).

    Args:
        agent: The freshly built agent of one run.
        specs: The client tools (from the request, or :func:`stored_tools`).
    """
    for spec in specs:
        if spec["name"] in agent.tool_registry.names:
            _log.warning("client tool %r is left out: the agent has a tool of that name", spec["name"])
            continue
        agent.tool_registry.add(ClientTool(spec))


@dataclass(frozen=True)
class ClientTurn:
    """What a client's request adds to the turn it starts or continues.

    Attributes:
        tools: The client tools to offer the model (None: keep the run's stored ones, as a
            resume does).
        state: Top-level keys merged into the agent state (the client's edits).
        extra: More keys recorded under the run's ``tether.serve`` state (the AG-UI
            ``context`` and ``forwardedProps`` of the turn).
    """

    tools: list[ToolSpec] | None = None
    state: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def check(self) -> None:
        """A RequestError when the state names a key Tether keeps for itself (``tether.*``)."""
        for key in self.state:
            if key.startswith("tether."):
                raise RequestError(f"state.{key}: keys starting with 'tether.' are Tether's own; the client cannot set them")


class ClientTurnRecorder:
    """The hook that writes a :class:`ClientTurn` into the run with the turn's first write.

    On ``BeforeInvocation`` (under the run's lease, the stored run loaded, nothing of the turn
    written yet) it merges the client's state into the agent state and records the client tools
    and the extra keys in ``tether.serve``, so they are stored atomically with the work they
    belong to (a new prompt, or the step that consumes interrupt answers).
    """

    def __init__(self, turn: ClientTurn) -> None:
        self.turn = turn

    def register_hooks(self, registry: HookRegistry) -> None:
        registry.add_callback(BeforeInvocation, self.before)

    def before(self, event: BeforeInvocation) -> None:
        state = event.agent.state
        for key, value in self.turn.state.items():
            state.set(key, value)
        marker = dict(state.get(SERVE_KEY) or {})
        if self.turn.tools is not None:
            marker[TOOLS_KEY] = self.turn.tools
        marker.update(self.turn.extra)
        state.set(SERVE_KEY, marker)


__all__ = ["CLIENT_TOOL", "TOOLS_KEY", "ClientTool", "ClientTurn", "ClientTurnRecorder", "client_spec", "install", "stored_tools"]
