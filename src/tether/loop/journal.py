"""`StateJournal`: which tool call changed what in the agent state, so that each call's changes
are recorded together with that call's outcome, exactly once.

Tool calls of one cycle run at once and share the agent state (``context.agent.state``): a call
sees what its siblings wrote, as it always did. What a store must never hold is a change of a
call whose outcome it does not hold: killed then, the call is *in doubt*, runs again on resume
and applies its change a second time (a list gets the same entry twice). So while calls run, the
journal notes, per call, the keys it wrote and the calls whose not-yet-recorded writes it read or
overwrote (its *dependencies*). Two rules follow:

- a call's outcome is folded into the run only together with, or after, the outcomes of every
  call it depends on (:meth:`StateJournal.ready`): a result computed from a sibling's unrecorded
  change waits for that sibling, so no stored result ever carries a change of an unrecorded call;
- a store write takes the *committed view* of the state (:meth:`StateJournal.committed`): the
  live state with each key written by a call whose outcome is not folded yet set back to the
  value its last folded writer gave it (or the value it had before the calls began).

A crash then leaves a state that some prefix of the calls produced; the calls after it run again
on exactly that state, so the final state equals an uninterrupted run's, whatever the
interleaving. Writes a call makes through ``context.agent.state`` (and its hooks through the
agent) are tracked; the call is found through a context variable, which asyncio tasks and
``asyncio.to_thread`` inherit. Code outside any call (hooks around model calls, the caller
between invocations) writes the state directly, as before.

The journal is in-process bookkeeping of calls in flight, never stored: at any moment when no
call is running or waiting, the committed view is the live state and the journal is empty.
"""

from __future__ import annotations

import asyncio
from contextvars import ContextVar, Token
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from .state import RunState

_MISSING: Any = object()
"""A key's value before it existed (or after it was deleted)."""

Status = Literal["running", "finished", "folded"]


class _Call:
    """One tool call's part in the journal."""

    __slots__ = ("deps", "folded", "outcome", "status", "waiting", "writes")

    def __init__(self) -> None:
        self.status: Status = "running"
        self.deps: set[str] = set()
        self.writes: dict[str, tuple[int, Any]] = {}  # key -> (sequence, value written)
        self.outcome: Any = None  # what the driver folds (opaque here)
        self.waiting = False  # finished, and waiting for a group to fold it
        self.folded: asyncio.Future[None] | None = None  # set once the call's outcome is folded


class StateJournal:
    """Tracks the agent-state writes of the tool calls of one run (see the module docstring).

    Args:
        run: The run whose agent state (``run.state``) is tracked: only reads and writes of that
            dict count (a nested agent's state is another dict, with a journal of its own).
    """

    __slots__ = ("_before", "_calls", "_committed", "_dirty", "_last_writer", "_seq", "_waiting", "run")

    def __init__(self, run: RunState) -> None:
        self.run = run
        self._calls: dict[str, _Call] = {}
        self._before: dict[str, Any] = {}  # key -> value before the first tracked write
        self._committed: dict[str, tuple[int, Any]] = {}  # key -> (sequence, value) of its last folded write
        self._last_writer: dict[str, str] = {}
        self._dirty: set[str] = set()  # keys whose last writer is not folded
        self._seq = 0
        self._waiting = 0  # finished calls waiting for a group to fold them

    @property
    def store(self) -> dict[str, Any]:
        """The agent-state dict tracked (the run's, whichever dict it holds now)."""
        return self.run.state

    # -- calls ----------------------------------------------------------------------------

    def begin(self, call_id: str) -> None:
        """Register a call that is about to run (its hooks included)."""
        self._calls[call_id] = _Call()

    def active(self, call_id: str) -> _Active:
        """A context manager attributing the agent-state reads and writes inside it to ``call_id``."""
        return _Active(self, call_id)

    def finish(self, call_id: str, outcome: Any) -> list[tuple[str, Any]] | None:
        """The call ended with ``outcome`` (whatever the driver will fold for it): the group of
        :meth:`ready` to fold now when it includes this call, else None (the call waits)."""
        call = self._calls[call_id]
        call.status = "finished"
        call.outcome = outcome
        if not call.deps and not self._waiting:  # the usual case: nothing to wait for, nobody waits
            return [(call_id, outcome)]
        group = self.ready()
        if all(member != call_id for member, _ in group):
            call.waiting = True
            self._waiting += 1
            return None
        return group

    def ready(self) -> list[tuple[str, Any]]:
        """The finished calls whose outcomes may be folded now, as ``(call id, outcome)``, in the
        order they were begun: the largest set of finished calls each of whose dependencies is
        folded or in the set (calls that read each other's changes are folded together). The
        caller folds them all before its next store write, then calls :meth:`folded`."""
        calls = self._calls
        group = {call_id for call_id, call in calls.items() if call.status == "finished"}
        changed = True
        while changed and group:
            changed = False
            for call_id in list(group):
                if any(dep not in group and calls[dep].status != "folded" for dep in calls[call_id].deps):
                    group.discard(call_id)
                    changed = True
        return [(call_id, calls[call_id].outcome) for call_id in calls if call_id in group]

    def folded(self, call_ids: list[str]) -> None:
        """Mark ``call_ids`` (one :meth:`ready` group) folded: their writes are committed."""
        calls = self._calls
        for call_id in call_ids:
            call = calls[call_id]
            if call.waiting:
                call.waiting = False
                self._waiting -= 1
            call.status = "folded"
            if call.writes:
                for key, (seq, value) in call.writes.items():
                    if seq > self._committed.get(key, (-1, None))[0]:
                        self._committed[key] = (seq, value)
            if call.folded is not None and not call.folded.done():
                call.folded.set_result(None)
        if self._dirty:
            self._dirty = {key for key in self._dirty if calls[self._last_writer[key]].status != "folded"}
        for call in calls.values():
            if call.status != "folded":
                return
        self.clear()

    async def wait_folded(self, call_id: str) -> None:
        """Wait until another call's group folded ``call_id`` (see :meth:`ready`)."""
        call = self._calls.get(call_id)
        if call is None or call.status == "folded":
            return
        if call.folded is None:
            call.folded = asyncio.get_running_loop().create_future()
        await call.folded

    def is_folded(self, call_id: str) -> bool:
        """True once ``call_id``'s outcome was folded (or the journal forgot it: all folded)."""
        call = self._calls.get(call_id)
        return call is None or call.status == "folded"

    def clear(self) -> None:
        """Forget everything: every change is committed (all calls folded, or the cycle closed)."""
        self._calls.clear()
        if self._before:
            self._before.clear()
            self._committed.clear()
            self._last_writer.clear()
            self._dirty.clear()
        self._waiting = 0

    # -- the state ------------------------------------------------------------------------

    def read(self, call_id: str, key: str | None) -> None:
        """``call_id`` read ``key`` (None: every key): it depends on the key's unfolded writer."""
        if not self._dirty:
            return
        call = self._calls.get(call_id)
        if call is None:
            return
        keys = self._dirty if key is None else ((key,) if key in self._dirty else ())
        for dirty in keys:
            writer = self._last_writer[dirty]
            if writer != call_id:
                call.deps.add(writer)

    def write(self, call_id: str, key: str, value: Any) -> None:
        """``call_id`` is about to set ``key`` to ``value`` (``delete``: :data:`DELETED`).

        Call it before the store changes: the first write of a key remembers its old value."""
        call = self._calls.get(call_id)
        if call is None:
            return
        self.read(call_id, key)  # overwriting an unrecorded change depends on it too
        if key not in self._before:
            self._before[key] = self.store.get(key, _MISSING)
        self._seq += 1
        call.writes[key] = (self._seq, value)
        self._last_writer[key] = call_id
        self._dirty.add(key)

    def committed(self) -> dict[str, Any]:
        """The state as a store may record it now (the live dict itself when nothing differs)."""
        live = self.store
        if not self._dirty:
            return live
        view = dict(live)
        for key in self._dirty:
            value = self._committed[key][1] if key in self._committed else self._before[key]
            if value is _MISSING:
                view.pop(key, None)
            else:
                view[key] = value
        return view


class _Active:
    """Attributes the agent-state reads and writes inside a ``with`` block to one call."""

    __slots__ = ("call_id", "journal", "token")

    def __init__(self, journal: StateJournal, call_id: str) -> None:
        self.journal = journal
        self.call_id = call_id
        self.token: Token[tuple[StateJournal, str] | None] | None = None

    def __enter__(self) -> None:
        self.token = _ACTIVE.set((self.journal, self.call_id))

    def __exit__(self, *exc: object) -> None:
        if self.token is not None:
            _ACTIVE.reset(self.token)


DELETED: Any = _MISSING
"""The value :meth:`StateJournal.write` records for a deleted key."""

_ACTIVE: ContextVar[tuple[StateJournal, str] | None] = ContextVar("tether_state_journal", default=None)


def tracking(store: dict[str, Any]) -> tuple[StateJournal, str] | None:
    """The journal and call id that reads and writes of ``store`` belong to here, if any."""
    active = _ACTIVE.get()
    if active is None or active[0].store is not store:
        return None
    return active


__all__ = ["DELETED", "StateJournal", "tracking"]
