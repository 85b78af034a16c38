"""Replay with override: fork a durable run at a step, run it on from there, report divergence.

The engine of ``agent.replay`` (``tether.testing`` re-exports :func:`replay_run` for tests).
The fork (:func:`tether.durable.fork.fork_run`) holds the original run's recorded model
responses and tool results up to the step, so nothing before it is called again; from the step
the run goes on live, with the given model (a live provider, another cassette, a script) and the
optional edit of the last message ("what if the tool had said X at step 7?"). The replayed run's
messages after the fork point are then compared with the original's: the first difference is
the result's :class:`~tether.result.Divergence` (None when the replay ends the same way). The
edited message itself is the override, not a divergence.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from .._diff import describe, first_difference
from ..errors import RunNotFoundError
from ..models.base import Model
from ..result import AgentResult, Divergence
from .fork import Edit, fork_run
from .history import Step
from .store import RunStore, StoredRun

if TYPE_CHECKING:
    from ..agent import Agent


async def replay_run(
    agent: Agent,
    store: RunStore,
    run_id: str,
    at: int | Step,
    *,
    model: Model | None = None,
    edit: Edit | None = None,
    new_run_id: str | None = None,
) -> AgentResult:
    """Fork ``run_id`` at step ``at`` (with ``edit``), finish the fork with ``model``, and report
    the first divergence from the original (see the module docstring).

    Args:
        agent: The agent that runs the fork (its tools, hooks, reconcile); its own model is
            used when ``model`` is None and restored afterwards otherwise.
        store: The store holding ``run_id`` (the fork is written there too).
        run_id: The original run.
        at: The step to replay up to (a step number from ``store.history(run_id)``, or a Step).
        model: The model the run goes on with after the step.
        edit: Changes the messages at the step (as for ``agent.fork``).
        new_run_id: The fork's id (default ``RUN.fork-N``).
    """
    original = store.load(run_id)
    if original is None:
        raise RunNotFoundError(f"run {run_id!r} is not in the store; nothing to replay")
    history = store.history(run_id)
    fork_id = fork_run(store, run_id, at, new_run_id=new_run_id, edit=edit)
    fork_point = int(store.head(fork_id)["next_seq"])  # type: ignore[index]  # just written
    previous = agent.model
    if model is not None:
        agent.model = model
    try:
        result = await agent.resume_async(fork_id)
    finally:
        agent.model = previous
    replayed = store.load(fork_id)
    assert replayed is not None
    return dataclasses.replace(result, divergence=divergence(original, replayed, fork_point, history))


def divergence(original: StoredRun, replayed: StoredRun, fork_point: int, history: list[Step]) -> Divergence | None:
    """The first difference between the two runs' messages from seq ``fork_point`` on."""
    mine = _from(original, fork_point)
    theirs = _from(replayed, fork_point)
    path = first_difference(mine, theirs)
    if path is None:
        return None
    index = fork_point + int(path[0])
    absolute = ["messages", index, *path[1:]]
    step = next((s.step for s in history if s.seq > index), None)
    return Divergence(step, index, describe(absolute), _at(mine, path), _at(theirs, path))


def _from(run: StoredRun, seq: int) -> list[Any]:
    start = int(run.head["start_seq"])
    return list(run.messages[max(0, seq - start) :])


def _at(value: Any, path: list[Any]) -> Any:
    for part in path:
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and isinstance(part, int) and part < len(value):
            value = value[part]
        else:
            return None
    return value
