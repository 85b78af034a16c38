"""The child side of ``bench/resume_contract.py``: one probe protocol for every peer (standard library only).

Each ``bench/peers/contract_<peer>.py`` runs in its framework's own virtual environment as
``python contract_<peer>.py '<config JSON>'`` and prints JSON lines on stdout: ``{"ready": true}``
once its agent is built (then, when the config names a ``gate`` file, it waits for that file, so
``k`` racers act at the same instant), then one ``{"outcome": {...}}``. A child killed by a fault
prints nothing more: the parent sees ``-SIGKILL``.

The agent is the same in every framework: a scripted model that calls one tool, ``charge(order)``
with call id :data:`CALL_ID`, then answers :data:`FINAL`. ``charge`` asks a person first (one
interrupt, :data:`QUESTION`, answered :data:`ANSWER`), then fires its effect: a line
:data:`ORDER` appended (and fsynced) to the effect log, a file the parent names per case.

Faults, all real: ``kill_at=n`` sends SIGKILL to the child itself right after its ``n``-th save
point (a checkpoint/session write returned), ``kill_in_tool="before"``/``"after"`` inside
``charge`` just before / just after the effect. The work log records each model call
(``model:<assistant messages before it>``) and each completed tool call (``tool:<call id>``), so
the parent can tell which recorded work a resume ran again.

Actions (``config["action"]``): ``start`` (run the prompt; with ``answer`` set, answer the
interrupt in the same process and run on), ``resume`` (continue a crashed run with the framework's
own resume, answering the interrupt if it is asked again; its outcome holds the ``dump`` of the
stored run before and after), ``answer`` (answer the parked interrupt:
the consume-once racer), ``dump`` (the stored conversation, normalized), ``fork_points`` and
``fork`` (time travel, where the framework has it), ``validity`` (hand the framework's stored state
values no store should keep, see :data:`REFUSED`).

A peer module keeps the probe of the running action in its global ``PROBE`` and ends with
:func:`serve`: its handlers by action, the distributions whose versions it reports.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import math
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable, Coroutine, Sequence
from importlib import metadata
from types import ModuleType
from typing import Any

PROMPT = "Charge order A1."
ORDER = "A1"
CALL_ID = "call-charge-1"
QUESTION = "approve"
ANSWER = "yes"
FINAL = "charged A1"

REFUSED: tuple[tuple[str, Callable[[], Any]], ...] = (
    ("an object", object),
    ("NaN", lambda: math.nan),
    ("infinity", lambda: math.inf),
    ("bytes", lambda: b"\x00"),
    ("a lone surrogate", lambda: "\ud800"),
    ("a nested object", lambda: {"deep": [object()]}),
)
"""The values Tether's kit hands a run's state (``tether.testing._child.REFUSED_VALUES``): not
JSON, or JSON no store can keep. A framework keeps one when it is read back from its store."""


class Probe:
    """The faults and logs of one child, from its config."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
        self.saves = 0

    def save_point(self) -> None:
        """Call right after a checkpoint/session write returned: the ``kill_at``-th one is fatal."""
        self.saves += 1
        if self.config.get("kill_at") == self.saves:
            os.kill(os.getpid(), signal.SIGKILL)

    def _append(self, path: str | None, line: str) -> None:
        if not path:
            return
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, (line + "\n").encode())
            os.fsync(fd)
        finally:
            os.close(fd)

    def model_call(self, assistant_messages: int) -> None:
        self._append(self.config.get("work"), f"model:{assistant_messages}")

    def effect(self, order: str) -> None:
        """The tool's side effect, with the in-tool crash points around it."""
        if self.config.get("kill_in_tool") == "before":
            os.kill(os.getpid(), signal.SIGKILL)
        self._append(self.config.get("effects"), order)
        if self.config.get("kill_in_tool") == "after":
            os.kill(os.getpid(), signal.SIGKILL)

    def tool_done(self, call_id: str) -> None:
        self._append(self.config.get("work"), f"tool:{call_id}")

    def ready(self) -> None:
        """Tell the parent the agent is built; wait at the gate if there is one."""
        emit({"ready": True})
        gate = self.config.get("gate")
        while gate and not os.path.exists(gate):
            time.sleep(0.001)


def emit(data: dict[str, Any]) -> None:
    print(json.dumps(data, default=str), flush=True)


def record(role: str, unit: str = "", **fields: Any) -> dict[str, Any]:
    """One normalized stored record: ``role`` (user/assistant/tool), the work ``unit`` it stores, fields."""
    return {"role": role, "unit": unit, **fields}


def units(records: list[dict[str, Any]]) -> list[str]:
    """The work units of a normalized conversation: ``model:<i>`` per assistant message, ``tool:<id>`` per result."""
    out, assistants = [], 0
    for rec in records:
        if rec["role"] == "assistant":
            out.append(f"model:{assistants}")
            assistants += 1
        elif rec["role"] == "tool":
            out.append(f"tool:{rec.get('call_id', '')}")
    return out


def validity_outcome(trials: list[tuple[str, str, str]]) -> dict[str, Any]:
    """``trials``: (label, fate, detail) with fate ``refused`` / ``persisted`` / ``not persisted``."""
    return {
        "trials": [{"value": label, "fate": fate, "detail": detail[:300]} for label, fate, detail in trials],
        "persisted": [label for label, fate, _ in trials if fate == "persisted"],
    }


def main(handlers: dict[str, Callable[[Probe], dict[str, Any]]], versions: Callable[[], dict[str, str]]) -> None:
    """Run the action of ``sys.argv[1]`` (a JSON config) with the peer's handlers; exit 2 on an error."""
    config = json.loads(sys.argv[1])
    action = config["action"]
    try:
        if action == "versions":
            emit({"outcome": {"versions": versions(), "python": sys.version.split()[0]}})
            return
        handler = handlers.get(action)
        if handler is None:
            emit({"outcome": {"not_applicable": f"no {action} here"}})
            return
        probe = Probe(config)
        if action == "resume" and "dump" in handlers:  # the stored run before and after, read in this process
            before = handlers["dump"](probe)
            outcome = handler(probe)
            emit({"outcome": {**outcome, "before": before, "after": handlers["dump"](probe)}})
            return
        emit({"outcome": handler(probe)})
    except Exception as exc:
        traceback.print_exc()
        emit({"outcome": {"error": f"{type(exc).__name__}: {exc}"[:600]}})
        sys.exit(2)


def installed(*names: str) -> dict[str, str]:
    """The versions of the distributions among ``names`` that are installed."""
    found = {}
    for name in names:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return found


Handler = Callable[[Probe], dict[str, Any] | Coroutine[Any, Any, dict[str, Any]]]
ACTIONS = ("start", "resume", "answer", "dump", "fork_points", "fork", "validity")
"""The actions of the probe protocol (a peer without a fork API has no ``fork``)."""


def handlers_of(source: Any) -> dict[str, Handler]:
    """The handlers ``source`` (a module or an object) defines: for each of :data:`ACTIONS`, its
    attribute of that name, or with a leading underscore."""
    found = {name: getattr(source, name, None) or getattr(source, f"_{name}", None) for name in ACTIONS}
    return {name: handler for name, handler in found.items() if callable(handler)}


def serve(
    source: Any,
    packages: Sequence[str],
    bind: Sequence[ModuleType],
    run_async: Callable[[Coroutine[Any, Any, dict[str, Any]]], dict[str, Any]] = asyncio.run,
    hard_exit: bool = False,
) -> None:
    """:func:`main` for a peer module: the handlers of ``source`` (:func:`handlers_of`), each run with ``PROBE`` of every module of ``bind``
    set to its action's probe (a coroutine handler run by ``run_async``), the versions reported are
    those of ``packages``; ``hard_exit``: end with ``os._exit`` (a framework's threads would keep
    the process alive)."""

    def bound(handler: Handler) -> Callable[[Probe], dict[str, Any]]:
        def run(probe: Probe) -> dict[str, Any]:
            for module in bind:
                module.PROBE = probe  # type: ignore[attr-defined]
            out = handler(probe)
            return run_async(out) if inspect.iscoroutine(out) else out  # type: ignore[return-value]

        return run

    try:
        main({name: bound(handler) for name, handler in handlers_of(source).items()}, lambda: installed(*packages))
    finally:
        if hard_exit:
            sys.stdout.flush()
            os._exit(0 if sys.exc_info()[0] is None else 2)
