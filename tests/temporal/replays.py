"""Replaying workflow histories in the Temporal tests: stored ones (the versioning corpus) and
those of runs a test just made, against the current workflow code or a deliberately broken one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from temporalio import workflow
from temporalio.client import Client, WorkflowHistory
from temporalio.worker import Replayer

from tether.temporal.worker import workflow_runner

from .fixtures import child_executions

HISTORIES = Path(__file__).resolve().parent / "histories"


def load_histories(pattern: str = "*.json", folder: Path = HISTORIES) -> list[WorkflowHistory]:
    """The stored histories in ``folder`` whose file names match ``pattern``, by name."""
    return [WorkflowHistory.from_json(path.stem, path.read_text()) for path in sorted(folder.glob(pattern))]


async def replay(histories: list[WorkflowHistory], *workflows: type[Any]) -> None:
    """Replay each history against ``workflows`` (as a worker runs them); a nondeterminism raises."""
    replayer = Replayer(workflows=list(workflows), workflow_runner=workflow_runner())
    for history in histories:
        await replayer.replay_workflow(history)


async def run_histories(client: Client, *workflow_ids: str) -> list[WorkflowHistory]:
    """The history of each workflow, each followed by those of the child workflows it started."""
    histories: list[WorkflowHistory] = []
    for workflow_id in workflow_ids:
        history = await client.get_workflow_handle(workflow_id).fetch_history()
        histories.append(history)
        for child in child_executions(history):
            histories.append(await client.get_workflow_handle(child.workflow_id, run_id=child.run_id).fetch_history())
    return histories


def reordered(base: type[Any], name: str) -> type[Any]:
    """The workflow ``base`` (registered as ``name``) with one command more before it starts (a
    timer): a breaking change, which the replay of a stored history must catch.

    Temporal refuses a workflow class defined inside a function by its qualified name, so the
    class and its run method are named as if defined at module level."""
    class_name = f"Reordered{base.__name__}"

    async def run(self: Any, params: dict[str, Any]) -> Any:
        await workflow.sleep(0.01)
        return await super(cls, self).run(params)

    run.__qualname__ = f"{class_name}.run"
    cls: type[Any] = type(class_name, (base,), {"run": workflow.run(run), "__qualname__": class_name, "__module__": __name__})
    return workflow.defn(name=name, sandboxed=False)(cls)


async def assert_reordering_breaks_replay(base: type[Any], name: str, history: WorkflowHistory) -> None:
    """The replay of ``history`` against ``reordered(base, name)`` fails with a nondeterminism."""
    replayer = Replayer(workflows=[reordered(base, name)])
    with pytest.raises(Exception, match=r"[Nn]ondeterminism"):
        await replayer.replay_workflow(history)
