"""The typed shape of a durable run's head row.

The head is the one small row a store replaces at every step (see :mod:`tether.durable.store`):
the run's cursor, metrics, state and the bookkeeping of its live conversation and timeline.
:meth:`tether.durable.session.DurableSession.head` builds it as a :class:`DurableHead`, so mypy
checks every field it writes. Stores handle rows as opaque JSON objects (``dict[str, Any]``)
and validate what they load; :func:`as_row` is the one place a typed head becomes such a row.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict, cast

from ..types import CursorData, InterruptState, MetricsData, SystemContentBlock


class HeadFields(TypedDict):
    """What a run's timeline (:meth:`tether.durable.history.Timeline.head_fields`) adds to the head.

        ``status`` is one of ``tether.durable.history.STATUSES``; ``turns`` and ``steps`` count the
        run's invocations and step rows; the times are UTC ISO 8601. ``parent_run_id`` is written
        only for a nested run (a multi-agent child run): the run it was started from, and
        ``parent_incarnation`` that run's incarnation then (absent when the parent has none: see
        :mod:`tether.durable.incarnation`). ``incarnation`` is not the timeline's but the session's
        (the run's own, absent in a legacy head); it is declared here, with the other identity fields,
    and so is ``manifest``, the session's record of the run's manifest (:mod:`tether.manifest`),
    and ``compensation``, the record of the run's unwinding (:mod:`tether.durable.compensation`).
    """

    status: str
    turns: int
    steps: int
    created_at: str
    updated_at: str
    parent_run_id: NotRequired[str]
    parent_incarnation: NotRequired[str]
    incarnation: NotRequired[str]
    manifest: NotRequired[dict[str, Any]]
    compensation: NotRequired[dict[str, Any]]


class DurableHead(HeadFields):
    """The head row of a durable run, as ``DurableSession.head()`` builds it.

    ``start_seq`` and ``next_seq`` bound the live conversation's message rows; ``rev`` counts
    the writes (a session reuses its in-memory run while the store's ``rev`` and ``incarnation``
    still match). ``incarnation`` is the nonce drawn when the run was created (see
    :mod:`tether.durable.incarnation`); a run stored before incarnations existed has none.
    ``cursor`` is the run's cursor with empty ``results``: the open cycle's results are rows of
    their own. Heads loaded from a store stay ``dict[str, Any]`` (older heads may lack the
    timeline fields); :func:`tether.durable.session.run_state_of` reads them. ``manifest`` is
    the run's manifest (:mod:`tether.manifest`; absent in heads written before manifests).
    """

    schema_version: int
    rev: int
    start_seq: int
    next_seq: int
    cursor: CursorData
    metrics: MetricsData
    model_state: dict[str, Any]
    state: dict[str, Any]
    conversation_manager_state: dict[str, Any]
    interrupt_state: InterruptState
    system_prompt: list[SystemContentBlock] | None


def as_row(head: DurableHead) -> dict[str, Any]:
    """``head`` as the JSON object a store writes (the same dict, not a copy).

    A ``TypedDict`` is not a ``dict[str, Any]`` to mypy, though it is one at runtime; the store
    protocol takes plain JSON objects because it also handles heads it did not build (loaded,
    forked, older ones).
    """
    return cast("dict[str, Any]", head)


__all__ = ["DurableHead", "HeadFields", "as_row"]
