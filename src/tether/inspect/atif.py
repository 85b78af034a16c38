"""A run as an ATIF trajectory (Agent Trajectory Interchange Format, Harbor RFC 0001).

Targets ``ATIF-v1.6``, the newest version whose published models (Harbor's
``harbor.models.trajectories``) could be read when this was written; the test suite validates
exports against a JSON schema generated from those models (``tests/inspector/data``).

The mapping: the system prompt is a ``system`` step; a user message with text is a ``user``
step; an assistant message is an ``agent`` step (text, reasoning, tool calls, the token
figures and time of the model call that produced it); tool results become the ``observation``
of the agent step that called them (ATIF requires a result's ``source_call_id`` to name a call
of its own step). Error results keep their text; their status goes to the step's ``extra``.
Nested runs (multi-agent children) are ``subagent_trajectory_ref`` entries: on the result of the
tool call that started the child when the child's id derives from that call's id, else on a
final ``system`` step. A graph or swarm run has no conversation: each node execution is a
``system`` step referring to the nested run that executed it. ATIF is a log: it has no place for the run's cursor, agent state, interrupt
state or step history, so a trajectory cannot be resumed (``tether export --format tether`` can).
"""

from __future__ import annotations

import json
from typing import Any

from .._version import __version__
from ..durable.history import Step, summary_of
from ..durable.ids import child_run_id
from ..durable.store import RunStore
from ..multiagent.executions import record_of
from .payload import messages_of, stored_run

ATIF_VERSION = "ATIF-v1.6"
"""The ATIF ``schema_version`` this exporter writes."""


def to_atif(store: RunStore, run_id: str) -> dict[str, Any]:
    """The run ``run_id`` as an ATIF trajectory (JSON data; ``json.dumps`` it to write a file).

    Args:
        store: The store holding the run.
        run_id: The run to export; its ``session_id`` in the trajectory.

    Raises:
        RunNotFoundError: The store has no run ``run_id``.
    """
    head, history = stored_run(store, run_id)
    summary = summary_of(run_id, head)
    children = [s for s in store.list_runs() if getattr(s, "parent_run_id", None) == run_id]
    times, figures = _step_facts(history)
    steps: list[dict[str, Any]] = []
    system = _system_text(head.get("system_prompt"))
    if system:
        steps.append({"source": "system", "message": system})
    child_ids = {child.run_id: child for child in children}
    attached: set[str] = set()
    items = messages_of(store, run_id, head, history)
    graph = record_of(run_id, head, [item["message"] for item in items])
    if graph is not None:
        items = []  # a graph or swarm run has no conversation: its node executions are its steps
        steps.extend(_execution_steps(graph, child_ids, attached))
    for item in items:
        seq, message = item["seq"], item["message"]
        blocks = [b for b in message.get("content") or [] if isinstance(b, dict)]
        if message.get("role") == "assistant":
            steps.append(_agent_step(seq, blocks, times.get(seq), figures.get(seq)))
            continue
        results = [b["toolResult"] for b in blocks if isinstance(b.get("toolResult"), dict)]
        if results:
            _observe(steps, results, run_id, child_ids, attached, times.get(seq))
        texts = [b["text"] for b in blocks if isinstance(b.get("text"), str)]
        others = [sorted(b)[0] for b in blocks if "text" not in b and "toolResult" not in b]
        if texts or others:
            step: dict[str, Any] = {"source": "user", "message": "\n".join(texts), "extra": {"tether_seq": seq}}
            if others:
                step["extra"]["tether_blocks"] = others
            if times.get(seq):
                step["timestamp"] = times[seq]
            steps.append(step)
    rest = [child for child in children if child.run_id not in attached]
    if rest:
        steps.append(
            {
                "source": "system",
                "message": f"{len(rest)} nested run(s) of {run_id}",
                "observation": {
                    "results": [
                        {
                            "content": f"nested run {child.run_id}: {child.status}",
                            "subagent_trajectory_ref": [_ref(child.run_id, child.status)],
                        }
                        for child in rest
                    ]
                },
            }
        )
    if not steps:
        steps.append({"source": "system", "message": f"run {run_id} has no messages"})
    usage = (head.get("metrics") or {}).get("usage") or {}
    return {
        "schema_version": ATIF_VERSION,
        "session_id": run_id,
        "agent": {"name": "tether", "version": __version__},
        "steps": [{"step_id": number, **step} for number, step in enumerate(steps, start=1)],
        "notes": "Exported from a Tether durable run. ATIF is a log: the run's state, cursor and step history are not in it.",
        "final_metrics": {
            "total_prompt_tokens": int(usage.get("input_tokens", 0)),
            "total_completion_tokens": int(usage.get("output_tokens", 0)),
            "total_steps": len(steps),
            "extra": {"total_tokens": summary.total_tokens, "cycles": summary.cycles, "turns": summary.turns},
        },
        "extra": {
            "tether": {
                "status": summary.status,
                "stop_reason": summary.stop_reason,
                "parent_run_id": head.get("parent_run_id"),
                "created_at": summary.created_at,
                "updated_at": summary.updated_at,
            }
        },
    }


def _execution_steps(graph: dict[str, Any], children: dict[str, Any], attached: set[str]) -> list[dict[str, Any]]:
    """One ``system`` step per node execution of a graph or swarm run, in the order they
    started, each referring to the nested run that executed it."""
    steps: list[dict[str, Any]] = [{"source": "user", "message": graph["task"]}] if graph["task"] else []
    for entry in graph["log"]:
        label = f"{graph['kind']} node {entry['node']} execution {entry['n']}: {entry['status']}"
        step: dict[str, Any] = {"source": "system", "message": label, "extra": {"tether_execution": entry}}
        child = entry["run_id"]
        if child is not None:
            status = children[child].status if child in children else entry["status"]
            step["observation"] = {
                "results": [{"content": f"nested run {child}: {status}", "subagent_trajectory_ref": [_ref(child, status)]}]
            }
            attached.add(child)
        steps.append(step)
    return steps


def _step_facts(history: list[Step]) -> tuple[dict[int, str], dict[int, dict[str, Any]]]:
    """When each message was recorded (seq -> the time of the first step that held it) and the
    model figures of each assistant message (seq -> the ``after_model`` step's ``model``)."""
    times: dict[int, str] = {}
    figures: dict[int, dict[str, Any]] = {}
    recorded = 0
    for step in history:
        for seq in range(recorded, step.seq):
            times.setdefault(seq, step.created_at)
        recorded = max(recorded, step.seq)
        if step.position == "after_model" and step.model and step.seq > 0:
            figures[step.seq - 1] = step.model
    return times, figures


def _agent_step(seq: int, blocks: list[dict[str, Any]], when: str | None, model: dict[str, Any] | None) -> dict[str, Any]:
    step: dict[str, Any] = {
        "source": "agent",
        "message": "\n".join(b["text"] for b in blocks if isinstance(b.get("text"), str)),
        "extra": {"tether_seq": seq},
    }
    if when:
        step["timestamp"] = when
    reasoning = [
        b["reasoningContent"]["reasoningText"].get("text", "")
        for b in blocks
        if isinstance(b.get("reasoningContent"), dict) and isinstance(b["reasoningContent"].get("reasoningText"), dict)
    ]
    if reasoning:
        step["reasoning_content"] = "\n".join(str(text) for text in reasoning)
    calls = [b["toolUse"] for b in blocks if isinstance(b.get("toolUse"), dict)]
    if calls:
        step["tool_calls"] = [
            {
                "tool_call_id": str(call.get("toolUseId")),
                "function_name": str(call.get("name")),
                "arguments": call.get("input") if isinstance(call.get("input"), dict) else {"input": call.get("input")},
            }
            for call in calls
        ]
    if model:
        step["metrics"] = {
            "prompt_tokens": int(model.get("input_tokens", 0)),
            "completion_tokens": int(model.get("output_tokens", 0)),
            "extra": {"latency_ms": model.get("latency_ms")},
        }
    return step


def _observe(
    steps: list[dict[str, Any]],
    results: list[dict[str, Any]],
    run_id: str,
    children: dict[str, Any],
    attached: set[str],
    when: str | None,
) -> None:
    """Attach tool results to the agent step that made the calls (a ``system`` step when no step
    of the trajectory made them, e.g. a fork's copied history)."""
    owner = steps[-1] if steps and steps[-1]["source"] == "agent" else None
    own_ids = {call["tool_call_id"] for call in (owner or {}).get("tool_calls") or []}
    entries: list[dict[str, Any]] = []
    errors: dict[str, str] = {}
    for result in results:
        call_id = str(result.get("toolUseId"))
        entry: dict[str, Any] = {"content": _result_text(result)}
        if call_id in own_ids:
            entry["source_call_id"] = call_id
        child = child_run_id(run_id, call_id) if call_id else None
        if child in children:
            entry["subagent_trajectory_ref"] = [_ref(child, children[child].status)]
            attached.add(child)
        if result.get("status") == "error":
            errors[call_id] = "error"
        entries.append(entry)
    if owner is None or not own_ids:
        owner = {"source": "system", "message": "tool results", "extra": {}}
        if when:
            owner["timestamp"] = when
        steps.append(owner)
    observation = owner.setdefault("observation", {"results": []})
    observation["results"].extend(entries)
    if errors:
        owner.setdefault("extra", {}).setdefault("tool_result_status", {}).update(errors)


def _result_text(result: dict[str, Any]) -> str:
    """A tool result's content as text (JSON parts as JSON, images and documents described)."""
    parts: list[str] = []
    for part in result.get("content") or []:
        if not isinstance(part, dict):
            continue
        if isinstance(part.get("text"), str):
            parts.append(part["text"])
        elif "json" in part:
            parts.append(json.dumps(part["json"], ensure_ascii=False))
        elif isinstance(part.get("image"), dict):
            parts.append(f"[image: {part['image'].get('format', '?')}]")
        elif isinstance(part.get("document"), dict):
            parts.append(f"[document: {part['document'].get('name', '?')}]")
    return "\n".join(parts)


def _system_text(prompt: Any) -> str:
    """The system prompt as text: a string, or the text of its content blocks."""
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, list):
        return "\n".join(block["text"] for block in prompt if isinstance(block, dict) and isinstance(block.get("text"), str))
    return ""


def _ref(child: str, status: str) -> dict[str, Any]:
    return {"session_id": child, "extra": {"tether_run_id": child, "status": status}}
