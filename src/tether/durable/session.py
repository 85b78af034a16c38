"""`DurableSession`: one agent bound to one stored run; writes the run's new rows at each step.

It remembers which message objects are already stored, so a step appends only what is new. A
conversation manager that drops the oldest messages moves ``start_seq`` forward; any other
rewrite of the history (a summary replacing a prefix) starts a new live segment. History rows
are never rewritten, so the bytes written per message stay flat however long the run gets.
The session's :class:`~tether.durable.packing.HeadPacker` remembers what it stored, so an
unchanged large value is not written again and a step row holds only what its head changed.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import Executor
from typing import Any, cast

from ..errors import RowTooLargeError, StoreError
from ..loop.core import tool_uses_of
from ..loop.journal import StateJournal
from ..loop.state import Cursor, RunState
from ..types import InterruptState, Message, ToolResult
from .codec import new_packer
from .commits import COMMIT_OBSERVER, Staged
from .head import DurableHead, as_row
from .history import Timeline
from .incarnation import incarnation_of, new_incarnation
from .outbox import ToolTransactions
from .store import SCHEMA_VERSION, Lease, PreparedWrite, RunStore, StoredRun

_log = logging.getLogger(__name__)

EXTRA_HEAD_KEYS = ("strands",)
"""Head keys an edge of Tether owns, kept as they are by every session (a resume, a fork)."""

_NOT_TRIED: Any = object()
"""A write not offered to the store's ``send_commit`` yet (see :meth:`DurableSession._commit_blocking`)."""


class DurableSession:
    """Tracks what of ``run`` is stored in ``store`` under ``run_id``.

    Every write carries ``lease`` (the owner's epoch), the next revision and the run's
    incarnation (drawn here for a new run, read from the head of a stored one), so a session
    whose lease was lost fails at its next write with :class:`~tether.errors.LeaseLostError`,
    one whose run was deleted and created again with :class:`~tether.errors.RunReplacedError`,
    and neither overwrites the other run's rows (nor starts another tool: the tool-start
    marker is a write too).
    """

    def __init__(
        self,
        store: RunStore,
        run_id: str,
        run: RunState,
        stored: StoredRun | None = None,
        lease: Lease | None = None,
        writer: Executor | None = None,
    ) -> None:
        self.store = store
        self.run_id = run_id
        self.run = run
        self.lease = lease
        self.writer = writer
        self._writing: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None
        self._queued = 0  # writes in flight or waiting for the lock (a write encoded now must not pass them)
        self._behind: asyncio.Future[None] | None = None  # a write committing while the run goes on (sync_async(behind=True))
        self.dirty = False
        self.broken = False  # a write failed: the bookkeeping below may be ahead of the store
        self.turn_active = False  # the driver of an invocation began (set by DurableDriver)
        self.journal: StateJournal | None = None  # the driver's: the agent state as its folded calls left it
        self.timeline = Timeline(None if stored is None else stored.head, run.metrics)
        self.packer = new_packer(getattr(store, "cipher", None))  # what this session stored: blobs, the last step's head
        self.incarnation = new_incarnation() if stored is None else incarnation_of(stored.head)
        manifest = None if stored is None else stored.head.get("manifest")
        self.manifest: dict[str, Any] | None = manifest if isinstance(manifest, dict) else None  # the run's manifest (tether.manifest)
        # Head entries of the run's edge, carried verbatim (``strands``: the Strands provider's, see
        # tether.strands._run): read from the stored head, written back with every head.
        self.extra: dict[str, Any] = {} if stored is None else {k: stored.head[k] for k in EXTRA_HEAD_KEYS if k in stored.head}
        self.effects = ToolTransactions(store, run_id)  # tool calls' transactions, committed with their results' writes
        record = None if stored is None else stored.head.get("compensation")
        self.compensation: dict[str, Any] | None = record if isinstance(record, dict) else None  # its unwinding (compensation.py)
        # Whether the store may commit a write at once without blocking (a local SQLite commit):
        # a store whose every commit is a round trip (PostgreSQL) is not asked.
        self._inline = bool(getattr(store, "inline_commits", True))
        # How a write is sent from the event loop and awaited there, if the store can (PostgreSQL).
        self._sender = getattr(store, "send_commit", None)
        self._behind_sent = False  # the write committing behind was sent that way: the next goes right behind it
        # Who is told of each committed write in memory (tether.durable.commits), and the writes
        # encoded for it and not committed yet, by revision.
        self.observer = COMMIT_OBSERVER.get()
        self._staged: dict[int | None, Staged] = {}
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

    def nest_in(self, parent_run_id: str | None) -> None:
        """Make this new run a nested run of ``parent_run_id`` (None: a top-level run): its head
        records the parent and the parent's incarnation as the store holds it now, which binds
        the child to this incarnation of the parent (see :mod:`tether.durable.incarnation`)."""
        self.timeline.parent_run_id = parent_run_id
        parent = None if parent_run_id is None else self.store.head(parent_run_id)
        self.timeline.parent_incarnation = incarnation_of(parent)

    def sync(self, position: str | None = None, *, status: str = "running", **info: Any) -> None:
        """Write what changed since the last sync: new messages, new results, the head.

        With ``position`` the write also appends a step row (see :mod:`tether.durable.history`);
        ``status`` is then the run status it records and ``info`` the step's timeline details.
        With a ``writer`` thread the commit goes through it, after any write it still has in
        flight (a cancelled :meth:`sync_async` leaves its commit running there). A write made
        with ``sync_async(behind=True)`` that is still committing is an error (it commits on the
        event loop this call would block): :meth:`settle` it first.
        """
        self._settled_now()
        prepared = self._encoded(position, status, info)
        if self.writer is None:
            self._commit(prepared, wait=True)
            return
        try:
            pending = self.writer.submit(self._commit, prepared, True)
        except RuntimeError:  # the writer was shut down: nothing can be in flight on it
            self._commit(prepared, wait=True)
            return
        pending.result()

    async def sync_async(self, position: str | None = None, *, status: str = "running", behind: bool = False, **info: Any) -> None:
        """:meth:`sync` without blocking the event loop on the store (other agents, concurrent
        tools go on). The rows are encoded on the loop's thread (they read live run state); the
        store commits them at once if that cannot block (a local SQLite commit with the lock
        free), else the commit runs on the ``writer`` thread (a PostgreSQL round trip, a lock
        held by another process, a WAL checkpoint). Writes of one session stay in order: a write
        is encoded (and takes its revision) at once only when no other write is in flight or
        waiting; checking the lock alone is not enough, since a released lock is free for a
        moment before the waiter it woke takes it.

        With ``behind``, a write that must wait for its commit returns as soon as it is encoded
        and sent on its way (:attr:`writing_behind`): the caller goes on while the store
        commits it, and the session's next write, or :meth:`settle`, waits for it first (and
        raises its error). The caller must not act on the write being stored until then.

        Args:
            position: The step the write records (None: no step row, a progress write).
            status: The run status the step records.
            behind: Return before the commit is done (see above).
            info: The step's timeline details.
        """
        _log.debug("run %r: store write (%s)", self.run_id, position or "progress")
        lock = self._write_lock()
        if self._queued == 0:  # no write in flight or waiting: try at once (no await until it is done)
            prepared = self._encoded(position, status, info)
            if self._inline and self._commit(prepared, wait=False):
                return  # committed at once: it could not block
            self._queued += 1
            try:
                sent = self._send(prepared)  # out on the wire now (a store that sends from the loop)
            except BaseException:
                self._queued -= 1
                raise
            if behind:
                self._behind_sent = sent is not None
                self._behind = asyncio.ensure_future(self._commit_in_turn(prepared, lock, sent))
                self._behind.add_done_callback(self._unqueue)  # also when it is cancelled before it runs
                if sent is None:
                    await asyncio.sleep(0)  # the commit's first step: it goes on its way now, not at the next await
                return
            try:
                async with lock:  # free, and nobody waits for it: taken at once, ahead of every later write
                    await self._commit_blocking(prepared, sent)
            finally:
                self._queued -= 1
            return
        self._queued += 1
        try:
            if self._behind is not None:
                # A write is committing behind: this one is encoded now, while it commits (its
                # revision is the next: every write since it was made is encoded on arrival and
                # queues for the lock in that order), sent right behind it when that one was
                # sent from the loop too (the store commits it after that one, and only if that
                # one committed), and settled once that one is.
                prepared = self._encoded(position, status, info)
                sent = self._send(prepared) if self._behind_sent and self._queued == 2 else None
                async with lock:
                    try:
                        await self.settle()  # its error, if it failed, is this write's
                    except BaseException:
                        if sent is not None:
                            await _abandon(sent)
                        raise
                    if sent is not None:
                        await self._commit_blocking(prepared, sent)
                    elif not (self._inline and self._commit(prepared, wait=False)):
                        await self._commit_blocking(prepared)
                return
            async with lock:  # after the writes in flight or waiting, in order
                prepared = self._encoded(position, status, info)
                if not (self._inline and self._commit(prepared, wait=False)):
                    await self._commit_blocking(prepared)
        finally:
            self._queued -= 1

    @property
    def writing_behind(self) -> bool:
        """True while a write made with ``sync_async(behind=True)`` is not settled."""
        return self._behind is not None

    async def settle(self) -> None:
        """Wait until the write made with ``sync_async(behind=True)``, if any, is committed;
        raises what its commit raised. Cancelled meanwhile, the commit is cancelled with it (a
        statement already sent finishes its round trip first)."""
        pending = self._behind
        if pending is None:
            return
        try:
            await pending
        finally:
            if self._behind is pending and pending.done():
                self._behind = None

    def _settled_now(self) -> None:
        """:meth:`settle` for a caller that cannot await: a finished write's error is raised;
        one still committing is a :class:`~tether.errors.StoreError`."""
        pending = self._behind
        if pending is None:
            return
        if not pending.done():
            raise StoreError(f"run {self.run_id!r}: a write is still committing on the event loop; settle() it before writing again")
        self._behind = None
        pending.result()

    async def _commit_in_turn(self, prepared: PreparedWrite, lock: asyncio.Lock, sent: Any) -> None:
        """The commit of a write made with ``behind``, after any write ahead of it. One sent
        from the loop was first (nothing was ahead of it) and takes no lock: the write after it
        settles it before anything else (it may be sent right behind it first)."""
        if sent is not None:
            await self._commit_blocking(prepared, sent)
            return
        async with lock:
            await self._commit_blocking(prepared, sent)

    def _unqueue(self, done: asyncio.Future[None]) -> None:
        self._queued -= 1
        if done.cancelled() or done.exception() is not None:
            self.broken = True  # its revision was taken: the bookkeeping may be ahead of the store

    def _send(self, prepared: PreparedWrite) -> Any:
        """Send the write from the event loop if the store can (``send_commit``, see
        :meth:`~tether.durable.postgres.PostgresStore.send_commit`): its handle, or None."""
        send = self._sender
        if send is None or self.effects.carries(prepared.rev):
            return None
        try:
            return send(self.run_id, prepared, lease=self.lease)
        except BaseException:
            self.broken = True
            raise

    async def _commit_blocking(self, prepared: PreparedWrite, sent: Any = _NOT_TRIED) -> None:
        """Commit: the outcome of the write ``sent`` from the event loop (None: it could not be
        sent that way; :data:`_NOT_TRIED`: send it now if the store can), else on the writer
        thread (inline when the session has none)."""
        if sent is _NOT_TRIED:
            sent = self._send(prepared)
        if sent is not None:
            try:
                if await sent.done():
                    self._told(prepared)
                    return
            except BaseException:
                self.broken = True
                raise
        _log.debug("run %r: the store would block (another writer's lock, a round trip): committing on a thread", self.run_id)
        if self.writer is None:
            self._commit(prepared, wait=True)
        else:
            await asyncio.get_running_loop().run_in_executor(self.writer, self._commit, prepared, True)

    def _commit(self, prepared: PreparedWrite, wait: bool) -> bool:
        try:
            if self.effects.carries(prepared.rev):  # it records a result whose tool call's effects commit with it
                if not wait:
                    return False  # a round trip: on the writer thread
                if self.effects.commit(self.run_id, prepared, self.lease):
                    self._told(prepared)
                    return True
            done = self.store.commit(self.run_id, prepared, lease=self.lease, wait=wait)
        except BaseException:
            self.broken = True
            raise
        if done:
            self._told(prepared)
        return done

    def _told(self, prepared: PreparedWrite) -> None:
        """Tell the observer, if any, of a committed write (:mod:`tether.durable.commits`)."""
        staged = self._staged.pop(prepared.rev, None)
        if staged is not None and self.observer is not None:
            staged.tell(self.observer, self.run_id)

    def _write_lock(self) -> asyncio.Lock:
        """The lock ordering this session's writes, for the running event loop (a session
        outlives the loop of a synchronous ``agent(...)`` call)."""
        loop = asyncio.get_running_loop()
        if self._writing is None or self._writing[0] is not loop:
            self._writing = (loop, asyncio.Lock())
        return self._writing[1]

    def _prepare(
        self, position: str | None, status: str, info: dict[str, Any]
    ) -> tuple[dict[str, Any], list[Message], dict[str, ToolResult], dict[str, Any] | None]:
        """The rows of the next write (and the bookkeeping that they are written)."""
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
        self.effects.attach(self.rev)
        if position is None:
            return as_row(self.head()), new, results, None
        self.timeline.begin(position, status)
        head = as_row(self.head())
        return head, new, results, self.timeline.step(position, run, head, info)

    def _encoded(self, position: str | None, status: str, info: dict[str, Any]) -> PreparedWrite:
        """The next write, encoded by the store (on the caller's thread: it reads live state)."""
        head, new, results, step = self._prepare(position, status, info)
        try:
            prepared = self.store.prepare(self.run_id, head, new, results, step, self.packer)
            if self.observer is not None:
                self._staged[prepared.rev] = Staged.of(head, new, step, self.observer.head_keys)
            return prepared
        except RowTooLargeError as exc:
            self.broken = True
            self.effects.discard(self.rev)
            raise self._name_the_tool(exc, head, new) from None
        except BaseException:
            self.broken = True
            self.effects.discard(self.rev)
            raise

    def _name_the_tool(self, exc: RowTooLargeError, head: dict[str, Any], new: list[Message]) -> RowTooLargeError:
        """The store's size error, reworded to name the tool whose output is too large."""
        ids = [exc.key] if exc.table == "results" else []
        if exc.table == "messages":
            first = int(head["next_seq"]) - len(new)
            index = int(exc.key) - first
            if 0 <= index < len(new):
                ids = [block["toolResult"]["toolUseId"] for block in new[index]["content"] if "toolResult" in block]
        names = {use["toolUseId"]: use["name"] for message in self.run.messages[-3:] for use in tool_uses_of(message)}
        tools = [f"{names.get(i, '?')!r} (call {i})" for i in ids]
        if not tools:
            return exc
        return RowTooLargeError(
            f"run {self.run_id!r}: the output of tool {', '.join(tools)} is {exc.size} bytes as stored, over max_row_bytes="
            f"{exc.limit}; make the tool return less (store big data elsewhere and return a reference) or raise the limit",
            table=exc.table,
            key=exc.key,
            size=exc.size,
            limit=exc.limit,
        )

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
        head: DurableHead = {
            "schema_version": SCHEMA_VERSION,
            "rev": self.rev,
            "start_seq": self.start_seq,
            "next_seq": self.next_seq,
            "cursor": cursor,
            "metrics": run.metrics,
            "model_state": run.model_state,
            "state": self.journal.committed() if self.journal is not None and self.journal.run is run else run.state,
            "conversation_manager_state": run.conversation_manager_state,
            "interrupt_state": run.interrupt_state,
            "system_prompt": run.system_prompt,
            **self.timeline.head_fields(),
        }
        if self.compensation is not None:
            head["compensation"] = self.compensation
        if self.incarnation is not None:  # None: a run stored before incarnations (legacy)
            head["incarnation"] = self.incarnation
        if self.manifest is not None:  # stored once as a blob when large (tether.durable.packing)
            head["manifest"] = self.manifest
        if self.extra:
            as_row(head).update(self.extra)
        return head


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


async def _abandon(sent: Any) -> None:
    """Wait for the answer of a write sent behind one that failed (so its connection is free
    again); it wrote nothing (its compare-and-swap names a revision never reached), and the
    failure that matters is the first write's."""
    try:
        await sent.done()
    except Exception:  # the first write's error is the one raised
        _log.debug("a write sent behind a failed one failed too", exc_info=True)
