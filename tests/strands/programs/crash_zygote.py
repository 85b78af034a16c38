"""The process side of the corpus crash harness (``tests/strands/test_corpus_crash.py``).

Run as ``crash_zygote.py`` with the corpus copy as working directory, it imports Strands, Tether
and the corpus helpers once, then reads one JSON job a line on stdin and runs each in a child
``os.fork()``-ed from this pre-imported process (so a kill and restart does not pay the imports),
answering ``{"status": N}`` (N: the child's ``waitpid`` status) on stdout.

A job runs one corpus program (``runpy``, as ``__main__``) with these instruments, the program
itself unchanged:

- **fault points**: every model call (``model:N``, the Nth ``Model.stream`` call of the process)
  and every tool call run through Strands' ``ExecuteToolStage`` (``tool:<toolUseId>#K``, or
  ``tool:<name>#K`` for a generated id: the Kth call of it) is appended to ``points``, and so is
  each call the program makes itself with ``MCPClient.call_tool_sync``; the job's ``kill_at`` point
  SIGKILLs the process there (inside a tool: after its side effect; for an MCP tool, an
  ``MCPAgentTool`` or ``call_tool_sync``, when the server's answer reaches the client: the server, a
  child of the process over stdio, ran the call);
- **the side-effect log** ``effects``: each tool call appends ``{"key", "tool", "top"}``, the key
  being the call's idempotency key (``run_id/toolUseId``; ``direct:<name>`` for a direct
  ``agent.tool.X()`` or ``call_tool_sync`` call, which no executor records; ``top`` for those the
  program makes itself, not a tool); an ``MCPAgentTool`` call whose request does not carry that
  key to its server (``_meta``, ``tether/idempotencyKey``; none for a ``direct:`` one) fails;
- **the executor**: ``executor: "sequential"`` gives every ``Agent`` built without one Strands'
  ``SequentialToolExecutor`` (the default is its ``ConcurrentToolExecutor``);
- **a model that answers by its request**: ``FakeModel`` (the corpus's scripted model) plays the
  turn the uninterrupted run played for the same request (``answers``, recorded with
  ``record_answers``), as a real model answers the conversation it is sent, not its call count;
  its log of what it was asked (``model.requests``, which programs print) stands for the model
  server's: each request is journaled, and a restarted program's model starts with the ones the
  killed process made (a response recorded before the crash is not asked for again, so without
  them ``model.requests[0]`` would not exist);
- **the journal of top-level calls** (``journal``: each ``agent(...)``, ``invoke_async``,
  ``stream_async``, ``structured_output(_async)``, direct tool call and ``graph(...)``/``swarm(...)``
  (``invoke_async``) of the program, not nested ones such as a node's or a sub-agent's): its start
  (stdout offset, whether it continues a turn: an ``interruptResponse`` or ``checkpointResume``
  prompt) and its outcome. A restarted program (``restart_from``: the killed one's journal) does
  not make again the calls of the turns that ended before the crash: each returns its journaled
  outcome, as a workflow engine replays completed calls, with stdout discarded until the first call
  of the cut-off turn, which is made again, as is every call after it.
"""

from __future__ import annotations

import atexit
import hashlib
import io
import json
import os
import runpy
import signal
import sys
import traceback
from typing import Any

import fake_model
import provider  # noqa: F401
import pydantic
import show  # noqa: F401
import strands
import strands.agent.conversation_manager
import strands.experimental.checkpoint
import strands.handlers
import strands.hooks
from strands.agent.agent_result import AgentResult
from strands.interrupt import Interrupt
from strands.middleware import ExecuteToolStage
from strands.multiagent.base import MultiAgentResult
from strands.multiagent.graph import Graph
from strands.multiagent.swarm import Swarm
from strands.telemetry.metrics import EventLoopMetrics, ToolMetrics
from strands.tools._caller import _ToolCaller
from strands.tools.executors import SequentialToolExecutor
from strands.tools.mcp import MCPAgentTool, MCPClient

import tether.durable.postgres
import tether.strands.session_manager  # noqa: F401

JOB: dict[str, Any] = {}
"""The running child's job (empty in the zygote)."""


class _Process:
    """What the instruments count in one child."""

    def __init__(self) -> None:
        self.model_calls = 0
        self.tool_calls: dict[str, int] = {}
        self.models = 0
        self.depth = 0
        self.calls = 0
        self.asked: dict[tuple[int, str], int] = {}
        self.stdout: Any = None
        self.answers: dict[str, list[int]] = {}
        self.journal: dict[int, dict[str, Any]] = {}
        self.restart = -1
        self.requests: dict[int, list[Any]] = {}
        """Per ``FakeModel`` (by ordinal): what it was asked in the killed process (a restart's)."""
        self.mcp_points: dict[str, tuple[str, str]] = {}
        self.direct = False


P = _Process()


def _append(path: str | None, entry: Any) -> None:
    if path:
        with open(path, "a") as out:
            out.write(json.dumps(entry, sort_keys=True, default=repr) + "\n")


def _point(name: str, *, kill: bool = True) -> None:
    _append(JOB.get("points"), name)
    if kill:
        _kill_at(name)


def _kill_at(name: str) -> None:
    if JOB.get("kill_at") == name:
        os.kill(os.getpid(), signal.SIGKILL)


# -- the model: fault points, answers by request ------------------------------------------------------


def _fingerprint(messages: Any, tool_specs: Any, system_prompt: Any) -> str:
    generated: dict[str, str] = {}  # a direct tool call's random toolUseId: by order of appearance

    def plain(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                k: generated.setdefault(v, f"g{len(generated)}") if k == "toolUseId" and not str(v).startswith("tu-") else plain(v)
                for k, v in value.items()
            }
        return [plain(v) for v in value] if isinstance(value, list) else value

    shown = []
    for message in messages or []:
        content = list(message.get("content", []))
        if content and all("toolResult" in block for block in content):  # concurrent tools finish in any order
            content = sorted(content, key=lambda block: str(block["toolResult"].get("toolUseId")))
        shown.append({"role": message.get("role"), "content": plain(content)})
    names = sorted(spec["name"] for spec in tool_specs or [])
    raw = json.dumps([shown, names, system_prompt], sort_keys=True, default=repr)
    return hashlib.sha256(raw.encode()).hexdigest()[:20]


_fake_init = fake_model.FakeModel.__init__
_fake_stream = fake_model.FakeModel.stream


def _init(self: Any, turns: Any, *args: Any, **kwargs: Any) -> None:
    _fake_init(self, turns, *args, **kwargs)
    self.script = list(turns)
    self.ordinal = P.models
    self.requests = list(P.requests.get(self.ordinal, []))
    P.models += 1


def _stream(self: Any, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any) -> Any:
    fingerprint = f"{self.ordinal}:{_fingerprint(messages, tool_specs, system_prompt)}"
    if JOB.get("record_answers"):
        _append(JOB["record_answers"], {"request": fingerprint, "turn": len(self.script) - len(self.turns)})
    elif P.answers:
        seen = P.asked.get((self.ordinal, fingerprint), 0)
        P.asked[(self.ordinal, fingerprint)] = seen + 1
        turns = P.answers.get(fingerprint) or []
        if seen >= len(turns):
            raise RuntimeError(f"FakeModel {self.ordinal}: a request the uninterrupted run never made ({fingerprint})")
        self.turns = [self.script[turns[seen]]]
    return _journaled(self, _fake_stream(self, messages, tool_specs, system_prompt, **kwargs))


async def _journaled(model: Any, events: Any) -> Any:
    """``events`` (a ``FakeModel.stream``), the request it logs journaled (see ``_child``)."""
    count = len(model.requests)
    try:
        async for event in events:
            yield event
    finally:
        for request in model.requests[count:]:
            _append(JOB.get("journal"), {"model": model.ordinal, "request": request})


fake_model.FakeModel.__init__ = _init  # type: ignore[method-assign]
fake_model.FakeModel.stream = _stream  # type: ignore[method-assign]


def _instrument_model(model: Any) -> None:
    if getattr(model, "_crash_instrumented", False):
        return
    inner = model.stream

    def stream(*args: Any, **kwargs: Any) -> Any:
        P.model_calls += 1
        _point(f"model:{P.model_calls}")
        return inner(*args, **kwargs)

    model.stream = stream
    model._crash_instrumented = True


# -- tools: fault points and the side-effect log ---------------------------------------------------------


async def _tool_stage(context: Any, next_fn: Any) -> Any:
    use = context.tool_use
    ident = str(use.get("toolUseId"))
    tether_state = context.invocation_state.get("tether") or {}
    key = (tether_state.get("idempotency_keys") or {}).get(ident) or f"direct:{use['name']}"
    _append(JOB.get("effects"), {"key": key, "tool": use["name"], "top": P.direct})
    P.direct = False
    name = ident if ident.startswith("tu-") else use["name"]
    P.tool_calls[name] = P.tool_calls.get(name, 0) + 1
    point = f"tool:{name}#{P.tool_calls[name]}"
    if isinstance(context.tool, MCPAgentTool):  # killed when the server's answer reaches the client
        P.mcp_points[ident] = (point, key)
    _point(point, kill=not isinstance(context.tool, MCPAgentTool))
    async for event in next_fn(context):
        yield event


_call_tool_async = MCPClient.call_tool_async
_call_tool_sync = MCPClient.call_tool_sync


async def _mcp_call_tool_async(self: Any, tool_use_id: str, *args: Any, **kwargs: Any) -> Any:
    """An MCP tool's call: the server runs it (its side effect) with the key of the side-effect log in
    the request's ``_meta`` (none for a call no run records), then the client process is killed at
    the tool's point, before Strands receives the result."""
    point, key = P.mcp_points.pop(tool_use_id, (None, ""))
    sent = (kwargs.get("meta") or {}).get("tether/idempotencyKey")
    if point is not None and sent != (None if key.startswith("direct:") else key):
        raise AssertionError(f"MCP call {tool_use_id}: the server was sent the key {sent!r}, the side-effect log has {key!r}")
    result = await _call_tool_async(self, tool_use_id, *args, **kwargs)
    if point is not None:
        _kill_at(point)
    return result


def _mcp_direct(self: Any, tool_use_id: str, name: str, *args: Any, **kwargs: Any) -> Any:
    """The program's own ``MCPClient.call_tool_sync`` (no agent: no executor records it): a point
    killed when the server's answer arrives, logged ``direct:<name>``."""
    _append(JOB.get("effects"), {"key": f"direct:{name}", "tool": name, "top": True})
    label = tool_use_id if tool_use_id.startswith("tu-") else name
    P.tool_calls[label] = P.tool_calls.get(label, 0) + 1
    point = f"tool:{label}#{P.tool_calls[label]}"
    _point(point, kill=False)
    result = _call_tool_sync(self, tool_use_id, name, *args, **kwargs)
    _kill_at(point)
    return result


def _mcp_call_tool_sync(self: Any, *args: Any, **kwargs: Any) -> Any:
    if P.depth:  # inside a call of the program's agents: that call's points cover it
        return _call_tool_sync(self, *args, **kwargs)
    return _mcp_direct_top(self, *args, **kwargs)


MCPClient.call_tool_async = _mcp_call_tool_async  # type: ignore[method-assign]
MCPClient.call_tool_sync = _mcp_call_tool_sync  # type: ignore[method-assign]
_agent_init = strands.Agent.__init__


def _agent(self: Any, *args: Any, **kwargs: Any) -> None:
    if JOB.get("executor") == "sequential" and kwargs.get("tool_executor") is None:
        kwargs["tool_executor"] = SequentialToolExecutor()
    _agent_init(self, *args, **kwargs)
    _instrument_model(self.model)
    self.add_middleware(ExecuteToolStage, _tool_stage)


strands.Agent.__init__ = _agent  # type: ignore[method-assign]


# -- the journal of top-level calls ---------------------------------------------------------------------


def _continues(prompt: Any) -> bool:
    blocks = prompt if isinstance(prompt, list) else []
    return bool(blocks) and all(isinstance(b, dict) and ("interruptResponse" in b or "checkpointResume" in b) for b in blocks)


def _type_name(value: Any) -> dict[str, str]:
    return {"module": type(value).__module__, "name": type(value).__qualname__}


def _lookup(entry: dict[str, str]) -> Any:
    found: Any = sys.modules[entry["module"]]
    for part in entry["name"].split("."):
        found = getattr(found, part)
    return found


def _encode(value: Any) -> Any:
    if isinstance(value, AgentResult):
        return {
            "agent_result": {
                "stop_reason": value.stop_reason,
                "message": value.message,
                "interrupts": [{"id": i.id, "name": i.name, "reason": i.reason, "response": i.response} for i in value.interrupts or []],
                "structured_output": None if value.structured_output is None else _encode(value.structured_output),
                "checkpoint": None if value.checkpoint is None else value.checkpoint.to_dict(),
                "metrics": {
                    "cycle_count": value.metrics.cycle_count,
                    "accumulated_usage": dict(value.metrics.accumulated_usage),
                    "tool_metrics": {
                        name: [m.call_count, m.success_count, m.error_count] for name, m in value.metrics.tool_metrics.items()
                    },
                },
            }
        }
    if isinstance(value, pydantic.BaseModel):
        return {"model": _type_name(value), "data": value.model_dump(mode="json")}
    if isinstance(value, MultiAgentResult):
        return {"unreplayable": _type_name(value)}
    return {"json": value}


def _decode(entry: dict[str, Any]) -> Any:
    if "raised" in entry:
        raise _lookup(entry["raised"])(entry["message"])
    outcome = entry["outcome"]
    if "model" in outcome:
        return _lookup(outcome["model"]).model_validate(outcome["data"])
    if "json" in outcome:
        return outcome["json"]
    if "unreplayable" in outcome:
        raise NotImplementedError(f"the harness does not replay a completed {outcome['unreplayable']['name']} call")
    got = outcome["agent_result"]
    checkpoint = got["checkpoint"] and strands.experimental.checkpoint.Checkpoint.from_dict(got["checkpoint"])
    metrics = EventLoopMetrics()
    metrics.cycle_count = got["metrics"]["cycle_count"]
    metrics.accumulated_usage = got["metrics"]["accumulated_usage"]
    for name, (calls, successes, errors) in got["metrics"]["tool_metrics"].items():
        metrics.tool_metrics[name] = ToolMetrics({"toolUseId": "", "name": name, "input": {}}, calls, successes, errors)
    return AgentResult(
        stop_reason=got["stop_reason"],
        message=got["message"],
        metrics=metrics,
        state={},
        interrupts=[Interrupt(**i) for i in got["interrupts"]],
        structured_output=got["structured_output"] and _decode({"outcome": got["structured_output"]}),
        checkpoint=checkpoint,
    )


def _begin(prompt: Any) -> tuple[int, bool]:
    """Number the call; True when a restarted program does not make it again (its turn ended)."""
    index = P.calls
    P.calls += 1
    if 0 <= index < P.restart:
        return index, True
    if index == P.restart:
        sys.stdout.flush()
        sys.stdout = P.stdout
    sys.stdout.flush()
    _append(JOB.get("journal"), {"call": index, "offset": os.lseek(1, 0, os.SEEK_CUR), "continues": _continues(prompt)})
    return index, False


def _end(index: int, outcome: Any = None, error: BaseException | None = None) -> None:
    if error is not None:
        _append(JOB.get("journal"), {"call": index, "raised": _type_name(error), "message": str(error)})
    else:
        _append(JOB.get("journal"), {"call": index, "outcome": _encode(outcome)})


def _top_level_sync(method: Any, prompt_of: Any) -> Any:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if P.depth:
            return method(*args, **kwargs)
        index, skip = _begin(prompt_of(args, kwargs))
        if skip:
            return _decode(P.journal[index])
        P.depth += 1
        try:
            outcome = method(*args, **kwargs)
        except Exception as exc:
            _end(index, error=exc)
            raise
        finally:
            P.depth -= 1
        _end(index, outcome)
        return outcome

    return wrapper


def _top_level_async(method: Any) -> Any:
    async def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        if P.depth:
            return await method(self, *args, **kwargs)
        index, skip = _begin(args[0] if args else kwargs.get("prompt", kwargs.get("task")))  # (a graph's or swarm's: task)
        if skip:
            return _decode(P.journal[index])
        P.depth += 1
        try:
            outcome = await method(self, *args, **kwargs)
        except Exception as exc:
            _end(index, error=exc)
            raise
        finally:
            P.depth -= 1
        _end(index, outcome)
        return outcome

    return wrapper


def _top_level_stream(method: Any) -> Any:
    async def wrapper(self: Any, prompt: Any = None, **kwargs: Any) -> Any:
        if P.depth:
            async for event in method(self, prompt, **kwargs):
                yield event
            return
        index, skip = _begin(prompt)
        if skip:
            raise NotImplementedError("the harness does not replay a completed stream_async call")
        P.depth += 1
        try:
            async for event in method(self, prompt, **kwargs):
                if "result" in event:
                    last = event["result"]
                yield event
        finally:
            P.depth -= 1
        _end(index, last)

    return wrapper


def _prompt_arg(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return args[1] if len(args) > 1 else kwargs.get("prompt")


strands.Agent.__call__ = _top_level_sync(strands.Agent.__call__, _prompt_arg)  # type: ignore[method-assign]
strands.Agent.structured_output = _top_level_sync(strands.Agent.structured_output, lambda a, k: None)  # type: ignore[method-assign]
strands.Agent.invoke_async = _top_level_async(strands.Agent.invoke_async)  # type: ignore[method-assign]
strands.Agent.structured_output_async = _top_level_async(strands.Agent.structured_output_async)  # type: ignore[method-assign]
strands.Agent.stream_async = _top_level_stream(strands.Agent.stream_async)  # type: ignore[method-assign]
_tool_getattr = _ToolCaller.__getattr__


def _tool_caller(self: Any, name: str) -> Any:
    method = _tool_getattr(self, name)

    def direct(*args: Any, **kwargs: Any) -> Any:
        P.direct = True  # its side effect is logged "top": a top-level direct call
        try:
            return method(*args, **kwargs)
        finally:
            P.direct = False

    top = _top_level_sync(direct, lambda a, k: None)
    return lambda *args, **kwargs: method(*args, **kwargs) if P.depth else top(*args, **kwargs)


_ToolCaller.__getattr__ = _tool_caller  # type: ignore[method-assign]
for _multi in (Graph, Swarm):  # their nodes' agent calls are nested in them
    _multi.__call__ = _top_level_sync(_multi.__call__, _prompt_arg)  # type: ignore[method-assign]
    _multi.invoke_async = _top_level_async(_multi.invoke_async)  # type: ignore[method-assign]
_mcp_direct_top = _top_level_sync(_mcp_direct, lambda a, k: None)


# -- the fork server ------------------------------------------------------------------------------------


def _child(job: dict[str, Any]) -> None:
    signal.alarm(120)  # a program that hangs ends (SIGALRM) instead of the test
    JOB.update(job)
    os.environ.update(job.get("env") or {})
    fd = os.open(job["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1)
    os.close(fd)
    err = os.open(job["stdout"] + ".err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(err, 2)
    os.close(err)
    P.stdout = sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), write_through=True)
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), write_through=True)
    if job.get("answers"):
        with open(job["answers"]) as table:
            for line in table:
                entry = json.loads(line)
                P.answers.setdefault(entry["request"], []).append(entry["turn"])
    if job.get("restart_from"):
        starts: dict[int, dict[str, Any]] = {}
        with open(job["restart_from"]) as journal:
            for line in journal:
                entry = json.loads(line)
                if "model" in entry:
                    P.requests.setdefault(entry["model"], []).append(entry["request"])
                else:
                    (P.journal if "offset" not in entry else starts)[entry["call"]] = entry
        restart = min(set(starts) - set(P.journal), default=len(starts))
        while restart > 0 and starts.get(restart, {}).get("continues"):
            restart -= 1  # a turn's continuation: the turn's first call is made again
        P.restart = restart
        sys.stdout = io.StringIO()  # the killed process printed what comes before it
        _append(job.get("journal"), {"restart": restart, "offset": starts[restart]["offset"] if restart in starts else None})
    sys.argv = [job["program"]]
    runpy.run_path(job["program"], run_name="__main__")


def main() -> None:
    sys.path.insert(0, os.getcwd())
    for line in sys.stdin:
        job = json.loads(line)
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                _child(job)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
            except BaseException:
                traceback.print_exc()
                code = 1
            try:
                sys.stdout.flush()
                atexit._run_exitfuncs()
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"status": status}), flush=True)


if __name__ == "__main__":
    main()
