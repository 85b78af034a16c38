"""One crashtest child process: build the agent from its factory, run or resume, maybe die.

``python -m tether.testing._child CONFIG_JSON``. The parent (:mod:`tether.testing.crash`)
passes the factory (``"module:attr"``), the store spec, the run id and prompt, the save point to
SIGKILL at, and the paths it reads back: a starts log and an optional gate file both racers wait
for. The starts log gets one JSON line per *start* of a tool's body (``key``: the idempotency
key ``run_id/toolUseId``, ``id``, ``name``), written by a wrapper this process installs around
the agent's tools before the body runs and appended with ``O_APPEND``, so a start survives a
SIGKILL in the middle of the tool. The count comes from the tool's side, not from the loop
under test: a re-run the loop does not report is still counted.

Prints ``ready`` once the agent is built, then one JSON line with the outcome. With
``answer_in_doubt`` it answers ``tether.in_doubt`` interrupts with ``"rerun"`` and reports the
answered calls (``answered``); with ``answers`` (``{interrupt name: response}``) it answers the
run's own interrupts too and reports their names (``asked``); with ``hold_answers`` (a path) it
first prints ``interrupted`` and waits for that file, so a test can order two racers.

The action is ``start`` (a new turn with the prompt), ``resume``, ``fork`` (fork the run at step
``at`` into ``fork_id`` and run the fork on), ``answer`` (deliver ``answers`` to the stored
run's pending interrupts: the resume contract's consume-once check starts several at once) or
``probe`` (the checkpoint-validity probes: values the run's state must refuse) or ``compensate``
(``agent.compensate(run_id)``: undo the stored run's performed effects, or go on with an
unwinding cut short). With ``undo_log`` every start of a tool's compensation is recorded there
like a tool start (``key``: the undo key, ``call``: the undone call's key), and its end with
what it returned (``returned``), counted on the compensation's side (:func:`count_undos`).
Exit codes: 0 the run ended, 3 another owner held the run (``RunLockedError``) or had already
answered the interrupts this process was answering (``late``), 2 error.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import json
import os
import sys
import time
import traceback
from collections.abc import Awaitable, Callable
from typing import Any

from ..agent import Agent
from ..answers import answer_block
from ..durable.indoubt import IN_DOUBT
from ..errors import InterruptError, RunLockedError, TetherError
from ..hooks import BeforeToolCall
from ..interrupts import Interrupt, InterruptSignal
from ..tools.base import Tool
from ..tools.compensation import Undo
from ..tools.context import ToolContext
from ..types import ToolResult, ToolUse
from .faults import FaultStore, open_store


def load_factory(spec: str) -> Any:
    """The callable named by ``"module:attr"`` (``attr`` may be dotted)."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise TetherError(f"factory {spec!r} must be 'module:attr' naming a zero-argument callable that builds the agent")
    target: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        target = getattr(target, part)
    if not callable(target):
        raise TetherError(f"factory {spec!r} is not callable")
    return target


def build(spec: str) -> Agent:
    """Call the factory and check it built an :class:`~tether.Agent`."""
    agent = load_factory(spec)()
    if not isinstance(agent, Agent):
        raise TetherError(f"factory {spec!r} returned {type(agent).__name__}, not a tether Agent")
    return agent


def _append(path: str, line: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


def count_starts(agent: Agent, log: str, hold: Callable[[str], Awaitable[None] | None] | None = None) -> None:
    """Record every start of a tool body of ``agent`` in ``log`` (one JSON line, before the body runs).

    Each tool the agent registers gets its instance's ``invoke`` wrapped once: the tools given
    to the agent now, the tools a tool source lists at run time when first called (from a
    ``BeforeToolCall`` hook). A hook of the agent that runs a registered tool twice for one call
    is counted twice, as it should be. A body that stops to ask a person (an interrupt) gets a
    second line marked ``interrupted``: it did not run to its end and runs again once answered,
    so that start is not counted. ``hold`` (if given) is called with ``"before"`` after the line is
    written and before the body runs, and with ``"after"`` once the body returned, before its
    result goes back to the loop (awaited when it returns an awaitable): the served contract
    stops a server at either place to kill it there.
    """

    def wrap(tool: Tool | None) -> None:
        if tool is None:
            return
        # A tool object may outlive this agent (a module-level @tool, in a process that builds
        # agents for several checks): its starts go to the log of the latest count_starts.
        setattr(tool, "_crashtest_to", (log, hold))  # noqa: B010
        if getattr(tool, "_crashtest_counted", False):
            return
        invoke = tool.invoke

        async def counted(tool_use: ToolUse, context: ToolContext) -> ToolResult:
            log, hold = getattr(tool, "_crashtest_to")  # noqa: B009
            line = {"key": context.idempotency_key, "id": tool_use["toolUseId"], "name": tool_use["name"], "pid": os.getpid()}
            _append(log, json.dumps(line))
            held = hold("before") if hold is not None else None
            if held is not None:
                await held
            try:
                result = await invoke(tool_use, context)
            except InterruptSignal:  # the body stopped to ask a person: it runs again once answered
                _append(log, json.dumps({**line, "interrupted": True}))
                raise
            held = hold("after") if hold is not None else None
            if held is not None:
                await held
            return result

        setattr(tool, "invoke", counted)  # noqa: B010 - an instance attribute shadows the method
        setattr(tool, "_crashtest_counted", True)  # noqa: B010

    for name in agent.tool_registry.names:
        wrap(agent.tool_registry.get(name))

    def late(event: BeforeToolCall) -> None:
        if event.tool_use is not None:
            wrap(agent.tool_registry.get(event.tool_use["name"]))

    agent.hooks.add_callback(BeforeToolCall, late)


def count_undos(agent: Agent, log: str) -> None:
    """Record every start of a compensation of ``agent``'s tools in ``log`` (a JSON line before it
    runs: ``key`` the undo key, ``call`` the undone call's key, ``name``) and its end (the same line
    with ``returned``: what it returned, as text). Each wrapper keeps its compensation's name, so
    the run's manifest does not change."""

    def wrap(tool: Tool | None) -> None:
        undo = None if tool is None else tool.compensate
        if tool is None or undo is None or getattr(tool, "_contract_undo_counted", False):
            return

        def line(u: Undo, **more: Any) -> str:
            return json.dumps({"key": u.undo_key, "call": u.idempotency_key, "name": u.tool, "pid": os.getpid(), **more})

        if inspect.iscoroutinefunction(undo):

            @functools.wraps(undo)
            async def counted_async(u: Undo) -> Any:
                _append(log, line(u))
                value = await undo(u)
                _append(log, line(u, returned=str(value)))
                return value

            tool.compensate = counted_async
        else:

            @functools.wraps(undo)
            def counted(u: Undo) -> Any:
                _append(log, line(u))
                value = undo(u)
                if inspect.isawaitable(value):
                    return value  # awaited by the runtime; its end is not recorded
                _append(log, line(u, returned=str(value)))
                return value

            tool.compensate = counted
        setattr(tool, "_contract_undo_counted", True)  # noqa: B010

    for name in agent.tool_registry.names:
        wrap(agent.tool_registry.get(name))


def _compensable(agent: Agent) -> list[str]:
    """The names of the agent's tools that declare a compensation."""
    return sorted(name for name in agent.tool_registry.names if getattr(agent.tool_registry.get(name), "compensate", None) is not None)


def _tool_kinds(agent: Agent) -> dict[str, bool]:
    """``{tool name: idempotent}`` for the agent's tools (what the parent's advice depends on)."""
    kinds: dict[str, bool] = {}
    for name in agent.tool_registry.names:
        tool: Tool | None = agent.tool_registry.get(name)
        if tool is not None:
            kinds[name] = bool(tool.idempotent)
    return kinds


def _still_pending(inner: Any, run_id: str, ids: set[str]) -> bool:
    """Whether any of the interrupts ``ids`` still waits for an answer in the stored run."""
    loaded = inner.load(run_id)
    if loaded is None:
        return False
    table = (loaded.head.get("interrupt_state") or {}).get("interrupts") or {}
    return any(ident in table and "response" not in table[ident] for ident in ids)


def _answered_ids(interrupts: list[Interrupt]) -> list[str]:
    """The tool-use ids of in-doubt interrupts (their reason names the call)."""
    return [str(i.reason["toolUseId"]) for i in interrupts if isinstance(i.reason, dict) and "toolUseId" in i.reason]


def _responses(interrupts: list[Interrupt], config: dict[str, Any]) -> list[dict[str, Any]] | None:
    """Answers to every interrupt of a stopped run (in-doubt ones ``"rerun"`` with
    ``answer_in_doubt``, the run's own ones from ``answers`` by name), or None when one has none."""
    own = config.get("answers") or {}
    out: list[dict[str, Any]] = []
    for interrupt in interrupts:
        if interrupt.name == IN_DOUBT and config.get("answer_in_doubt"):
            response: Any = "rerun"
        elif interrupt.name != IN_DOUBT and interrupt.name in own:
            response = own[interrupt.name]
        else:
            return None
        out.append(answer_block(interrupt.id, response))
    return out


def _pending(inner: Any, run_id: str) -> list[Interrupt]:
    """The interrupts of the stored run still waiting for an answer."""
    loaded = inner.load(run_id)
    table = ((loaded.head.get("interrupt_state") or {}).get("interrupts") or {}) if loaded is not None else {}
    return [
        Interrupt(id=str(ident), name=str(entry.get("name")), reason=entry.get("reason"))
        for ident, entry in table.items()
        if isinstance(entry, dict) and "response" not in entry
    ]


def _first(agent: Agent, inner: Any, config: dict[str, Any], run_id: str) -> tuple[str, Any]:
    """The first call of the child's action: (the run it works on, its result)."""
    action = config["action"]
    if action == "fork":
        forked = agent.fork(run_id, int(config["at"]), new_run_id=config["fork_id"])
        return forked, agent.resume(forked)
    if action == "answer":
        pending = _pending(inner, run_id)
        if not pending:
            raise InterruptError(f"run {run_id!r} has no interrupt waiting for an answer")
        return run_id, agent.resume(run_id, _responses(pending, config) or [])
    if action == "start" or inner.head(run_id) is None:
        return run_id, agent(config["prompt"], run_id=run_id)
    return run_id, agent.resume(run_id)


REFUSED_VALUES: tuple[tuple[str, Any], ...] = (
    ("an object", object()),
    ("NaN", float("nan")),
    ("infinity", float("inf")),
    ("bytes", b"\x00"),
    ("a lone surrogate", "\ud800"),
    ("a nested object", {"deep": [object()]}),
)
"""Values a run's state refuses (not JSON, or JSON no store can keep): the checkpoint-validity probes."""


def _probe(agent: Agent, run_id: str) -> dict[str, Any]:
    """Hand the agent values its state must refuse, and a prompt no store can keep: what got in.

    Returns ``{"accepted": [labels], "crashed": [what raised something other than a TetherError]}``;
    the parent compares the stored run before and after.
    """
    accepted, crashed = list[str](), list[str]()
    for label, value in REFUSED_VALUES:
        try:
            agent.state.set("tether.contract.probe", value)
        except TetherError:
            continue
        except Exception as exc:
            crashed.append(f"state value {label}: {type(exc).__name__}: {exc}")
            continue
        accepted.append(f"state value {label}")
    try:
        agent("\ud800 a prompt with a lone surrogate", run_id=run_id)
    except TetherError:
        pass
    except Exception as exc:
        crashed.append(f"a prompt with a lone surrogate: {type(exc).__name__}: {exc}")
    else:
        accepted.append("a prompt with a lone surrogate")
    return {"accepted": accepted, "crashed": crashed}


def main(config: dict[str, Any]) -> int:
    for entry in reversed(config.get("sys_path", [])):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    if config.get("scratch"):
        os.makedirs(config["scratch"], exist_ok=True)
        os.environ["TETHER_CRASHTEST_SCRATCH"] = config["scratch"]
    agent = build(config["factory"])
    inner = open_store(config["store"])
    store = FaultStore(inner, config.get("kill_at"), config.get("when", "after"))
    agent.store = store  # a RunStore proxy (the protocol is structural)
    count_starts(agent, config["log"])
    if config.get("undo_log"):
        count_undos(agent, config["undo_log"])
    print("ready", flush=True)
    gate = config.get("gate")
    if gate:
        os.environ["TETHER_CRASHTEST_RACER"] = "1"
    while gate and not os.path.exists(gate):
        time.sleep(0.002)
    run_id, in_doubt, answered, asked, paused = config["run_id"], 0, list[str](), list[str](), 0
    if config["action"] == "probe":
        print(json.dumps(_probe(agent, run_id)), flush=True)
        return 0
    kinds = {"tools": _tool_kinds(agent), "reconcile": agent.reconcile is not None, "compensable": _compensable(agent)}
    if config["action"] == "compensate":
        try:
            report = agent.compensate(run_id)
        except RunLockedError as exc:
            print(json.dumps({"locked": True, "error": str(exc), "writes": store.commits, **kinds}), flush=True)
            return 3
        print(json.dumps({**report.to_dict(), "writes": store.commits, **kinds}), flush=True)
        return 0
    late = {"late": True, "writes": 0, **kinds}
    try:
        try:
            run_id, result = _first(agent, inner, config, run_id)
        except InterruptError:
            if config["action"] != "answer" or _pending(inner, run_id):
                raise
            print(json.dumps(late), flush=True)  # another process's answer was taken first: refused, nothing ran
            return 3
        while result.stop_reason in ("interrupt", "checkpoint"):
            if result.stop_reason == "checkpoint":  # a pause at a cycle boundary (checkpointing=...): go on
                paused += 1
                result = agent.resume(run_id)
                continue
            if not result.interrupts:
                break
            responses = _responses(result.interrupts, config)
            if responses is None:
                break
            if config.get("hold_answers"):
                print("interrupted", flush=True)
                while not os.path.exists(config["hold_answers"]):
                    time.sleep(0.002)
            ids, calls = {i.id for i in result.interrupts}, _answered_ids([i for i in result.interrupts if i.name == IN_DOUBT])
            asked += [i.name for i in result.interrupts if i.name != IN_DOUBT]
            try:
                result = agent.resume(run_id, responses)
            except InterruptError:
                if _still_pending(inner, run_id, ids):
                    raise
                # Another owner answered these interrupts while this process waited between its
                # resume and its answer (the run is not leased in between): the late answer is
                # refused, nothing ran twice. This process lost the race, like a locked-out one.
                print(json.dumps({**late, "writes": store.commits}), flush=True)
                return 3
            in_doubt += len(calls)
            answered += calls
    except RunLockedError as exc:
        print(json.dumps({"locked": True, "error": str(exc), "writes": store.commits, **kinds}), flush=True)
        return 3
    interrupts = [{"name": i.name, "reason": i.reason} for i in result.interrupts]
    outcome = {
        "stop_reason": result.stop_reason,
        "interrupts": interrupts,
        "in_doubt_interrupts": in_doubt,
        "answered": answered,
        "asked": asked,
        "run_id": run_id,
        "paused": paused,
    }
    print(json.dumps({**outcome, "writes": store.commits, **kinds}), flush=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(json.loads(sys.argv[1])))
    except Exception:
        traceback.print_exc()
        sys.exit(2)
