"""`DurableSession`: one agent bound to one stored run; writes the run's new rows at each step.

It remembers which message objects are already stored, so a step appends only what is new. A
conversation manager that drops the oldest messages moves ``start_seq`` forward; any other
rewrite of the history (a summary replacing a prefix) starts a new live segment. History rows
are never rewritten, so the bytes written per message stay flat however long the run gets.
"""

from __future__ import annotations

from typing import Any, cast

from ..loop.state import Cursor, RunState
from ..types import InterruptState, Message, ToolResult
from .head import DurableHead, as_row
from .history import Timeline
from .store import SCHEMA_VERSION, RunStore, StoredRun


class DurableSession:
    """Tracks what of ``run`` is stored in ``store`` under ``run_id``."""

    def __init__(self, store: RunStore, run_id: str, run: RunState, stored: StoredRun | None = None) -> None:
        self.store = store
        self.run_id = run_id
        self.run = run
        self.dirty = False
        self.broken = False  # a write failed: the bookkeeping below may be ahead of the store
        self.turn_active = False  # the driver of an invocation began (set by DurableDriver)
        self.timeline = Timeline(None if stored is None else stored.head, run.metrics)
        if stored is None:
            self.persisted: list[Message] = []
            self.start_seq = 0
            self.next_seq = 0
            self.rev = 0
            self.results_cycle = run.cursor.cycle_index
            self.written: set[str] = set()
        else:
            head = stored.head
            self.persisted = list(run.messages)
            self.start_seq = int(head["start_seq"])
            self.next_seq = int(head["next_seq"])
            self.rev = int(head.get("rev", 0))
            self.results_cycle = run.cursor.cycle_index
            self.written = set(stored.results)

    def sync(self, position: str | None = None, *, status: str = "running", **info: Any) -> None:
        """Write what changed since the last sync: new messages, new results, the head.

        With ``position`` the write also appends a step row (see :mod:`tether.durable.history`);
        ``status`` is then the run status it records and ``info`` the step's timeline details.
        """
        run = self.run
        new = self._new_messages(run.messages)
        cursor = run.cursor
        if cursor.cycle_index != self.results_cycle:
            self.results_cycle = cursor.cycle_index
            self.written = set()
        results: dict[str, ToolResult] = {}
        if len(cursor.results) > len(self.written):
            results = {k: v for k, v in cursor.results.items() if k not in self.written}
            self.written.update(results)
        self.rev += 1
        if position is None:
            head = as_row(self.head())
            step = None
        else:
            self.timeline.begin(position, status)
            head = as_row(self.head())
            step = self.timeline.step(position, run, head, info)
        try:
            if step is None:
                self.store.write(self.run_id, head, new, results)
            else:
                self.store.write(self.run_id, head, new, results, step=step)
        except BaseException:
            self.broken = True
            raise

    def _new_messages(self, messages: list[Message]) -> list[Message]:
        persisted = self.persisted
        count = len(persisted)
        if count and len(messages) >= count and messages[0] is persisted[0] and messages[count - 1] is persisted[-1]:
            new = messages[count:]
            persisted.extend(new)
            self.next_seq += len(new)
            return new
        dropped = self._dropped_prefix(messages) if count and messages else None
        if dropped is None:
            new = list(messages)  # a rewritten history: start a new live segment
            self.start_seq = self.next_seq
        else:
            new = messages[count - dropped :]
            self.start_seq += dropped
        self.persisted = list(messages)
        self.next_seq += len(new)
        return new

    def _dropped_prefix(self, messages: list[Message]) -> int | None:
        """How many leading stored messages were removed, if that is the only change."""
        persisted = self.persisted
        first = messages[0]
        for k, message in enumerate(persisted):
            if message is first:
                kept = len(persisted) - k
                if len(messages) >= kept and all(messages[i] is persisted[k + i] for i in range(kept)):
                    return k
                return None
        return None

    def head(self) -> DurableHead:
        """The run's constant-size head row (see :class:`~tether.durable.head.DurableHead`)."""
        run = self.run
        cursor = run.cursor.to_dict()
        cursor["results"] = {}
        return {
            "schema_version": SCHEMA_VERSION,
            "rev": self.rev,
            "start_seq": self.start_seq,
            "next_seq": self.next_seq,
            "cursor": cursor,
            "metrics": run.metrics,
            "model_state": run.model_state,
            "state": run.state,
            "conversation_manager_state": run.conversation_manager_state,
            "interrupt_state": run.interrupt_state,
            "system_prompt": run.system_prompt,
            **self.timeline.head_fields(),
        }


def run_state_of(stored: StoredRun) -> RunState:
    """Rebuild the exact ``RunState`` a stored run describes.

    The head is read as the JSON the store loaded (``dict[str, Any]``): it was written by
    :meth:`DurableSession.head` and the store checked its framing when it loaded it.
    """
    head = stored.head
    cursor_data = dict(head["cursor"])
    cursor_data["results"] = stored.results
    return RunState(
        messages=stored.messages,
        state=head.get("state") or {},
        conversation_manager_state=head.get("conversation_manager_state") or {},
        interrupt_state=cast(InterruptState, head.get("interrupt_state") or {}),
        system_prompt=head.get("system_prompt"),
        model_state=head.get("model_state") or {},
        cursor=Cursor.from_dict(cursor_data),
        metrics=head["metrics"],
        run_id=stored.run_id,
    )
