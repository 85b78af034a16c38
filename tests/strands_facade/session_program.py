"""A small Strands-style program with a session manager, run in a fresh process by the session tests.

Usage: ``python -m tests.strands_facade.session_program FLAVOR MANAGER DIR LOG CRASH``

- FLAVOR ``tether``: Tether's session managers on a ``tether.Agent`` (until the facade agent
  lands, the program follows the facade's contract itself: :func:`call`); ``strands``: the
  real strands-agents package, unchanged.
- MANAGER ``file`` (``FileSessionManager(session_id="s1", storage_dir=DIR)``) or ``snapshot``
  (``SnapshotSessionManager("s1", storage=LocalFileStorage(DIR))``).
- The agent answers ``"compute"`` by calling the tool ``step`` twice (n=1, then n=2), then
  answering with both results. ``step`` appends ``effect <n>`` to LOG (its side effect) and,
  with CRASH=1, kills its own process with SIGKILL right after the side effect of n=2.

Prints one JSON line: the result's text and stop reason, and the agent's messages.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from typing import Any

PROMPT = "compute"


def respond(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The model: a pure function of the conversation (so a new process answers the same)."""
    start = max(i for i, m in enumerate(messages) if m["role"] == "user" and not any("toolResult" in b for b in m["content"]))
    results = [b["toolResult"] for m in messages[start:] for b in m["content"] if "toolResult" in b]
    if len(results) < 2:
        n = len(results) + 1
        use = {"toolUseId": f"t{start}_{n}", "name": "step", "input": {"n": n}}
        return {"role": "assistant", "content": [{"text": f"step {n}"}, {"toolUse": use}]}
    texts = [c.get("text", "") for r in results for c in r["content"]]
    return {"role": "assistant", "content": [{"text": "answer: " + ", ".join(texts)}]}


def side_effect(log: str, n: int, crash: bool) -> str:
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, f"effect {n}\n".encode())
    finally:
        os.close(fd)
    if crash and n == 2:
        os.kill(os.getpid(), signal.SIGKILL)
    return f"done {n}"


def plain(messages: list[Any]) -> list[dict[str, Any]]:
    return [{"role": m["role"], "content": m["content"]} for m in messages]


def run_tether(manager_kind: str, directory: str, log: str, crash: bool) -> dict[str, Any]:
    from tether import tool
    from tether.strands.session import FileSessionManager, SnapshotSessionManager
    from tether.strands.storage import LocalFileStorage

    @tool
    def step(n: int) -> str:
        """One step of the computation.

        Args:
            n: The step number.
        """
        return side_effect(log, n, crash)

    manager: Any
    if manager_kind == "file":
        manager = FileSessionManager(session_id="s1", storage_dir=directory)
    else:
        manager = SnapshotSessionManager("s1", storage=LocalFileStorage(directory))
    agent = tether_agent(step)
    run_id = attach(agent, manager)
    result = call(agent, run_id, PROMPT)
    text = "".join(b.get("text", "") for b in result.message["content"]) if result.message else ""
    return {"text": text, "stop_reason": result.stop_reason, "messages": plain(agent.messages)}


def tether_agent(*tools: Any, **kwargs: Any) -> Any:
    """A ``tether.Agent`` answering with :func:`respond` (agent id ``default``, as Strands' default)."""
    from tether import Agent
    from tether.models import ScriptedModel

    return Agent(model=ScriptedModel([respond] * 50), tools=list(tools), agent_id="default", name="default", **kwargs)


def attach(agent: Any, manager: Any) -> str | None:
    """What the facade agent does in its constructor."""
    from tether.strands.session._attach import attach_session

    return attach_session(agent, manager)


def call(agent: Any, run_id: str | None, prompt: Any) -> Any:
    """What the facade agent does for ``agent(prompt)`` (the contract of ``_attach``)."""
    from tether.strands.session._attach import plan_call

    if run_id is None:
        return agent(prompt)
    plan = plan_call(agent, prompt)
    result = None
    if plan.resume:
        result = agent.resume(run_id)
        if result.stop_reason == "interrupt":
            return result
    if plan.send:
        result = agent(prompt, run_id=run_id)
    return result


def strands_model() -> Any:
    """The model :func:`respond` as a ``strands.models.Model`` subclass (imports strands)."""
    from strands.models import Model

    class FakeModel(Model):  # type: ignore[misc]
        def update_config(self, **model_config: Any) -> None:
            pass

        def get_config(self) -> Any:
            return {}

        async def structured_output(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError
            yield  # pragma: no cover

        async def stream(self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any) -> Any:
            message = respond(messages)
            yield {"messageStart": {"role": "assistant"}}
            for block in message["content"]:
                if "text" in block:
                    yield {"contentBlockDelta": {"delta": {"text": block["text"]}}}
                else:
                    use = block["toolUse"]
                    yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": use["toolUseId"], "name": use["name"]}}}}
                    yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(use["input"])}}}}
                yield {"contentBlockStop": {}}
            stop = "tool_use" if any("toolUse" in b for b in message["content"]) else "end_turn"
            yield {"messageStop": {"stopReason": stop}}
            yield {"metadata": {"usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}, "metrics": {"latencyMs": 0}}}

    return FakeModel()


def run_strands(manager_kind: str, directory: str, log: str, crash: bool) -> dict[str, Any]:
    from strands import Agent, tool
    from strands.session import FileSessionManager, SnapshotSessionManager
    from strands.storage import LocalFileStorage

    @tool
    def step(n: int) -> str:
        """One step of the computation.

        Args:
            n: The step number.
        """
        return side_effect(log, n, crash)

    manager: Any
    if manager_kind == "file":
        manager = FileSessionManager(session_id="s1", storage_dir=directory)
    else:
        manager = SnapshotSessionManager("s1", storage=LocalFileStorage(directory))
    agent = Agent(model=strands_model(), tools=[step], session_manager=manager, callback_handler=None)
    result = agent(PROMPT)
    text = "".join(b.get("text", "") for b in result.message["content"])
    return {"text": text, "stop_reason": result.stop_reason, "messages": plain(agent.messages)}


def main() -> None:
    flavor, manager_kind, directory, log, crash = sys.argv[1:6]
    runner = run_tether if flavor == "tether" else run_strands
    out = runner(manager_kind, directory, log, crash == "1")
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main()
