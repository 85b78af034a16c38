"""Step rows: compacted when written (defaults and what follows from the head left out, the head
a delta against the step before), and rebuilt when read, from the nearest step at or before
the one wanted that holds a whole head (a keyframe; see :mod:`tether.durable.packing`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ...errors import StoreError
from ..crypto import RowCipher, RowPlace
from ..history import Step, StepTail, model_figures
from ..packing import KEYFRAME_EVERY, apply, predicted, refs_of
from .blobs import BlobFetch, decode_blobs, is_packed, resolve_refs, unpacked
from .compress import is_zipped, unzip_step
from .parse import ROW_ERRORS, damaged, parse_row, problem
from .validation import check_step, newer_schema

_STEP_DEFAULTS: dict[str, Any] = {
    "stop_reason": None,
    "model": None,
    "tools": [],
    "in_doubt": [],
    "results": [],
    "forked_from": None,
    "verdict": None,
    "undo": None,
}
"""Step fields a packed step row leaves out when they hold these values (read back as these)."""


def compact_step(
    step: dict[str, Any], previous: Mapping[str, Any] | None, previous_figures: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A step row without its head and without the fields that hold their default or follow
    from the head (``seq``, ``message_count``, ``status``) or, for a delta row, from the previous
    step's head ``previous`` (an ``after_model`` step's ``model`` figures); :func:`expanded`
    restores them. ``previous_figures``: :func:`head_figures` of ``previous`` as the writer
    took them from that head when it wrote it (None: read from ``previous``, which parses it)."""
    head = step["head"]
    row: dict[str, Any] = {}
    for key, value in step.items():
        if key in _LEFT_OUT_WHEN:  # the other fields are always kept: one set lookup each
            if key == "head" or _STEP_DEFAULTS.get(key, _ABSENT) == value:
                continue
            if key == "model":
                if (
                    previous is not None
                    and step.get("position") == "after_model"
                    and _same_figures(value, model_change(previous, head, previous_figures))
                ):
                    continue
            elif key == "seq":
                if value == head.get("next_seq"):
                    continue
            elif key == "message_count":
                if value == int(head["next_seq"]) - int(head["start_seq"]):
                    continue
            elif key == "status" and value == head.get("status"):
                continue
        row[key] = value
    return row


_ABSENT = object()
_LEFT_OUT_WHEN = frozenset({"head", "model", "seq", "message_count", "status", *_STEP_DEFAULTS})
"""The step fields :func:`compact_step` may leave out (the head, defaults, what follows from the head)."""


def _same_figures(a: Any, b: Any) -> bool:
    """True when flat dicts of numbers ``a`` and ``b`` are equal as JSON (``1`` is not ``1.0``)."""
    return type(a) is dict and type(b) is dict and a == b and all(type(a[key]) is type(b[key]) for key in a)


def model_change(previous: Any, head: Any, before: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """The model figures (latency, tokens) ``head``'s metrics add to ``previous``'s: what an
    ``after_model`` step records when its session's previous step is the step before it
    (``before``: :func:`head_figures` of ``previous``, when the caller has them)."""
    try:
        if before is None:
            before = model_figures(previous["metrics"])
        after = model_figures(head["metrics"])
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    return {key: after[key] - before[key] for key in after if key != "model_call_count"}


def head_figures(head: Any) -> dict[str, Any] | None:
    """The model figures of a head's metrics (None when it has none that read), taken when the
    head is written: the figures of its text, which JSON gives back exactly (the next step's
    :func:`compact_step` compares with them instead of parsing the stored head again)."""
    try:
        return model_figures(head["metrics"])
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def _step_row(run_id: str, number: int, text: Any, cipher: RowCipher | None) -> dict[str, Any]:
    """A step row parsed and opened (an object; StoreError naming the step otherwise)."""
    where = f"steps step {number}"
    if is_zipped(text):
        try:
            text = unzip_step(text)
        except (ValueError, UnicodeDecodeError) as exc:
            raise damaged(run_id, where, problem(exc)) from None
        if cipher is not None and not cipher.allow_plaintext:
            raise StoreError(f"run {run_id!r}: {where} is not encrypted but the store's cipher requires it")
    row = parse_row(run_id, where, text, cipher, RowPlace("steps", run_id, number))
    if type(row) is not dict:
        raise damaged(run_id, where, f"step: must be an object, got {type(row).__name__}")
    newer = newer_schema(run_id, row.get("head"))
    if newer is not None:
        raise newer
    return row


def _replay(
    run_id: str,
    rows: list[tuple[int, dict[str, Any]]],
    cipher: RowCipher | None,
    blobs: BlobFetch | None,
    keep: int = 0,
    tail: StepTail | None = None,
) -> list[Step]:
    """The steps of consecutive step rows, the first of which holds a whole head (a keyframe)
    unless ``tail`` holds the stored head of the step before them: each delta applies to the
    head of the step before it (see :mod:`tether.durable.packing`). Only the steps from
    ``rows[keep]`` on are rebuilt whole and returned (the rows before them only carry the head
    forward); ``tail`` is moved to the last row."""
    heads: list[Any] = []
    items: list[tuple[int, dict[str, Any]]] = []
    previous: Any = tail.head if tail is not None else None
    for index, (number, row) in enumerate(rows):
        where = f"steps step {number}"
        if "head" in row:
            previous = row["head"]
        elif "delta" in row:
            if type(previous) is not dict:
                raise damaged(run_id, where, "its head is a delta, and no earlier step holds a whole head")
            try:
                before = previous
                previous = apply(predicted(previous, number, row.get("created_at")), row["delta"])
                if row.get("position") == "after_model" and "model" not in row:
                    row = {**row, "model": model_change(before, previous)}
            except (TypeError, ValueError) as exc:
                raise damaged(run_id, where, f"its head delta does not apply ({problem(exc)})") from None
        else:
            raise damaged(run_id, where, "step.head: is missing")
        if index >= keep:
            heads.append(previous)
            items.append((number, row))
    if tail is not None and rows:
        tail.step, tail.head = rows[-1][0], previous
    ids: set[str] = set()
    for head in heads:
        if is_packed(head):
            ids |= refs_of(head)
    values = decode_blobs(run_id, ids, blobs, cipher) if ids and blobs is not None else {}
    steps = []
    for (number, row), head in zip(items, heads, strict=True):
        where = f"steps step {number}"
        if is_packed(head):
            head = unpacked(run_id, where, head, cipher, None) if blobs is None else resolve_refs(run_id, where, head, values)
        try:
            steps.append(check_step(expanded(row, head), number))
        except ROW_ERRORS as exc:
            raise damaged(run_id, where, problem(exc)) from None
    return steps


def expanded(row: dict[str, Any], head: Any) -> dict[str, Any]:
    """A step row with its head and the fields a packed row leaves out (see :func:`compact_step`)."""
    full = dict(row)
    full.pop("delta", None)
    full["head"] = head
    for key, default in _STEP_DEFAULTS.items():
        if key not in full:
            full[key] = list(default) if type(default) is list else default
    if type(head) is dict:
        if "seq" not in full:
            full["seq"] = head.get("next_seq")
        if "message_count" not in full and type(head.get("next_seq")) is int and type(head.get("start_seq")) is int:
            full["message_count"] = head["next_seq"] - head["start_seq"]
        if "status" not in full:
            full["status"] = head.get("status")
    return full


def decode_steps(
    run_id: str, rows: Iterable[tuple[int, Any]], cipher: RowCipher | None = None, blobs: BlobFetch | None = None
) -> list[Step]:
    """Parse, open, rebuild and validate a run's step rows from its first (``(step, text)`` in
    order); StoreError naming run and step. Blob references resolve through ``blobs``."""
    parsed = [(number, _step_row(run_id, number, text, cipher)) for number, text in rows]
    return _replay(run_id, parsed, cipher, blobs) if parsed else []


StepRows = Callable[[int, int | None], list[tuple[int, Any]]]
"""A store's reader of one run's step rows: given ``first`` and ``stop``, the ``(step, text)``
rows with ``first <= step < stop`` (``stop`` None: every step from ``first``), in order."""


def decode_step_at(
    run_id: str, number: int, read: StepRows, cipher: RowCipher | None = None, blobs: BlobFetch | None = None
) -> Step | None:
    """Step ``number`` rebuilt from the nearest step row at or before it that holds a whole head.

    Reads the window a session's keyframe spacing guarantees (:data:`KEYFRAME_EVERY`), and from
    the first step only when no whole head is in it (rows written with another spacing). None
    when the run has no step ``number``; StoreError when no step up to it holds a whole head.
    """
    rows = read(max(1, number - 2 * KEYFRAME_EVERY + 1), number + 1)
    if not rows or rows[-1][0] != number:
        return None
    found = _replay_last(run_id, rows, cipher, blobs)
    if found is None and rows[0][0] > 1:
        found = _replay_last(run_id, read(1, number + 1), cipher, blobs)
    if found is None:
        raise damaged(run_id, f"steps step {number}", "no step up to it holds a whole head")
    return found


def decode_steps_after(
    run_id: str,
    after: int,
    read: StepRows,
    cipher: RowCipher | None = None,
    blobs: BlobFetch | None = None,
    tail: StepTail | None = None,
) -> list[Step]:
    """The steps after step ``after``.

    With a ``tail`` at ``after`` that holds that step's stored head, only the rows after it are
    read: their deltas apply to it. Otherwise the rows from the window a session's keyframe
    spacing guarantees (:data:`KEYFRAME_EVERY`) before ``after`` are read, and replayed from the
    nearest whole head at or before the first new step (from the first step when the window
    holds none: rows written with another spacing). Either way the cost follows the new steps,
    not the run's length; ``tail`` (if given) is moved to the last step. StoreError when no step
    up to the first new one holds a whole head.
    """
    if tail is not None and tail.head is not None and tail.step == after:
        rows = read(after + 1, None)
        if not rows:
            return []
        parsed = [(n, _step_row(run_id, n, text, cipher)) for n, text in rows]
        if rows[0][0] == after + 1 or "head" in parsed[0][1]:  # the deltas follow the tail's head
            return _replay(run_id, parsed, cipher, blobs, tail=tail)
    if after <= 0:
        rows = read(1, None)
        parsed = [(n, _step_row(run_id, n, text, cipher)) for n, text in rows]
        return _replay(run_id, parsed, cipher, blobs, tail=_fresh(tail)) if parsed else []
    rows = read(max(1, after - 2 * KEYFRAME_EVERY + 2), None)
    first = next((i for i, (number, _) in enumerate(rows) if number > after), None)
    if first is None:
        return []
    parsed = [(n, _step_row(run_id, n, text, cipher)) for n, text in rows[first:]]
    start = first
    while "head" not in parsed[0][1] and start > 0:  # back to the keyframe: only those rows are parsed
        start -= 1
        parsed.insert(0, (rows[start][0], _step_row(run_id, rows[start][0], rows[start][1], cipher)))
    if "head" not in parsed[0][1] and rows[0][0] > 1:
        return [step for step in decode_steps_after(run_id, 0, read, cipher, blobs, tail) if step.step > after]
    if "head" not in parsed[0][1]:
        raise damaged(run_id, f"steps step {rows[first][0]}", "no step up to it holds a whole head")
    return _replay(run_id, parsed, cipher, blobs, keep=first - start, tail=_fresh(tail))


def _fresh(tail: StepTail | None) -> StepTail | None:
    """``tail`` without its head: a replay from a keyframe does not start from it."""
    if tail is not None:
        tail.head = None
    return tail


def _replay_last(run_id: str, rows: list[tuple[int, Any]], cipher: RowCipher | None, blobs: BlobFetch | None) -> Step | None:
    """The last of ``rows`` replayed from the last one holding a whole head (None: none does)."""
    parsed = [(n, _step_row(run_id, n, text, cipher)) for n, text in rows]
    start = next((i for i in range(len(parsed) - 1, -1, -1) if "head" in parsed[i][1]), None)
    return None if start is None else _replay(run_id, parsed[start:], cipher, blobs)[-1]


def decode_step(run_id: str, number: int, text: Any, cipher: RowCipher | None = None, blobs: BlobFetch | None = None) -> Step:
    """Parse, open and validate one step row holding a whole head; StoreError naming run and step."""
    return _replay(run_id, [(number, _step_row(run_id, number, text, cipher))], cipher, blobs)[0]
