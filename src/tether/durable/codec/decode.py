"""Reading: the head, message and tool-result rows parsed, opened and validated, and a loaded
run assembled from them (:func:`assemble_run`, :func:`stored_at`); :func:`summarize_row` turns
a bad head into a ``corrupt`` summary so one damaged run never hides the others."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ..._json import dumps_compact as dumps
from ..._messages import check_tool_result as _check_tool_result
from ..._messages import decode_message_bytes, decode_tool_result_bytes, validate_messages
from ...errors import ShapeError, StoreError, json_path
from ...types import Message, ToolResult
from ..crypto import RowCipher, RowPlace, is_envelope
from ..history import CORRUPT, RunSummary, Step, summary_of
from ..incarnation import INCARNATION
from ..packing import BLOB_REF, is_result_ref
from ..packing import apply as apply_patch
from ..redaction import RedactionPolicy
from ..store import StoredRun
from .blobs import BlobFetch, decode_blobs, unpacked
from .compress import is_zipped, unzip_step
from .parse import ROW_ERRORS, damaged, open_row, parse_row, parse_text, problem
from .validation import check_head, check_open_cycle, newer_schema


def decode_head(
    run_id: str,
    text: Any,
    cipher: RowCipher | None = None,
    *,
    rev: int | None = None,
    blobs: BlobFetch | None = None,
    incarnation: str | None = None,
) -> dict[str, Any]:
    """Parse, open and validate a head row; StoreError naming the run on any failure.

    A sealed head is bound to its revision, which its envelope carries in clear (``"rev"``).
    ``rev`` is the revision the store believes current (its own record of it, e.g. a column
    written with the head): a head at another revision is refused, which catches an old head
    written back (a rollback) even though that head is itself authentic. Without ``rev`` only
    the head's own consistency is checked; a version-2 head without a clear revision cannot be
    verified then.

    A packed head's blob references are resolved through ``blobs`` (the store's reader of blob
    rows); without it (``list_runs`` summaries) the fields stored as blobs read as None.

    ``incarnation`` is the one the store holds for the run (in clear, checked by every write): a
    head without one (written into the run by a Tether that predates incarnations) is given it,
    so the run's next writer carries the incarnation the store expects.
    """
    value = parse_text(run_id, "head", text)
    clear: int | None = None
    if is_envelope(value) and "rev" in value:
        value = dict(value)
        found = value.pop("rev")
        if type(found) is not int or found < 0:
            raise damaged(run_id, "head", f"the envelope's rev {found!r:.60} is not a non-negative integer")
        clear = found
    head = open_row(run_id, "head", value, cipher, RowPlace("head", run_id, clear if clear is not None else rev))
    newer = newer_schema(run_id, head)
    if newer is not None:
        raise newer
    head = unpacked(run_id, "head", head, cipher, blobs)
    try:
        checked = check_head(head)
    except ROW_ERRORS as exc:
        raise damaged(run_id, "head", problem(exc)) from None
    if clear is not None and checked["rev"] != clear:
        raise damaged(run_id, "head", f"the head's rev {checked['rev']} is not the rev {clear} its envelope was sealed at")
    if rev is not None and checked["rev"] != rev:
        raise StoreError(
            f"run {run_id!r}: head is at revision {checked['rev']} but the store's current revision is {rev}: "
            "an older head was written back (a rollback), or the store is damaged"
        )
    if incarnation is not None and checked.get(INCARNATION) is None:
        checked[INCARNATION] = incarnation
    return checked


def merge_head_delta(run_id: str, text: Any, delta: Any) -> Any:
    """The text of a head a store keeps as a base plus a delta (see
    :meth:`~tether.durable.packing.HeadPacker.head_delta`): ``text`` itself when ``delta`` is
    None, else the base with the delta applied. A delta that does not fit its base, or a sealed
    base (heads of a store with a cipher are never deltas), is a damaged store."""
    if delta is None:
        return text
    base = parse_text(run_id, "head", text)
    if is_zipped(delta):  # compressed like a step row (see prepare_write)
        try:
            delta = unzip_step(delta)
        except ValueError as exc:
            raise damaged(run_id, "head delta", problem(exc)) from None
    patch = parse_text(run_id, "head delta", delta)
    if is_envelope(base):
        raise damaged(run_id, "head delta", "a sealed head has a delta (sealed heads are written whole)")
    try:
        return dumps(apply_patch(base, patch))
    except (ValueError, TypeError) as exc:
        raise damaged(run_id, "head delta", f"it does not fit the head it patches ({problem(exc)})") from None


def decode_messages(
    run_id: str, rows: Iterator[tuple[int, Any]], cipher: RowCipher | None = None, blobs: BlobFetch | None = None
) -> list[Message]:
    """Parse, open and validate message rows (``(seq, text)``); StoreError naming run and seq.
    Tool results stored as blobs are read through ``blobs``."""
    messages: list[Any] = []
    seqs: list[int] = []
    refs: list[tuple[int, list[Any], int]] = []  # (message index, content, block index) of each blob reference
    for seq, text in rows:
        where = f"messages seq {seq}"
        message = parse_row(run_id, where, text, cipher, RowPlace("messages", run_id, seq))
        if type(message) is dict and type(message.get("content")) is list and message.get("role") == "user":
            for i, block in enumerate(message["content"]):
                if type(block) is dict and is_result_ref(block.get("toolResult")):
                    refs.append((len(messages), message["content"], i))
        messages.append(message)
        seqs.append(seq)
    if refs:
        ids = {content[i]["toolResult"][BLOB_REF] for _, content, i in refs}
        if blobs is None:
            raise damaged(run_id, f"messages seq {seqs[refs[0][0]]}", "it refers to a blob, and this read has no blobs")
        values = decode_blobs(run_id, ids, blobs, cipher)
        for _, content, i in refs:
            content[i] = {"toolResult": values[content[i]["toolResult"][BLOB_REF]]}
    try:
        validate_messages(messages, ["messages"])
        decode_message_bytes(messages)
    except ShapeError as exc:
        index = exc.path[1] if len(exc.path) > 1 and isinstance(exc.path[1], int) and exc.path[1] < len(seqs) else None
        if index is None:
            raise damaged(run_id, "messages", str(exc)) from None
        detail = f"{json_path(['message', *exc.path[2:]])}: {exc.problem}"
        raise damaged(run_id, f"messages seq {seqs[index]}", detail) from None
    except ROW_ERRORS as exc:
        raise damaged(run_id, "messages", problem(exc)) from None
    return messages


def decode_results(
    run_id: str, rows: Iterator[tuple[str, Any]], cipher: RowCipher | None = None, *, cycle: int, blobs: BlobFetch | None = None
) -> dict[str, ToolResult]:
    """Parse, open and validate the tool-result rows of cycle ``cycle`` (``(toolUseId, text)``).

    Each must be a valid tool result (content a list of valid items) whose ``toolUseId`` is the
    row's; StoreError naming the run, the cycle and the id otherwise. A result stored as a blob
    is read through ``blobs``.
    """
    results: dict[str, ToolResult] = {}
    for tool_use_id, text in rows:
        where = f"results cycle {cycle} toolUseId {tool_use_id!r}"
        result = parse_row(run_id, where, text, cipher, RowPlace("results", run_id, f"{cycle}/{tool_use_id}"))
        if is_result_ref(result):
            if blobs is None:
                raise damaged(run_id, where, "it refers to a blob, and this read has no blobs")
            result = decode_blobs(run_id, [result[BLOB_REF]], blobs, cipher)[result[BLOB_REF]]
        try:
            _check_tool_result(result, ["result"])
            if result["toolUseId"] != tool_use_id:
                raise ShapeError(["result", "toolUseId"], f"is {result['toolUseId']!r:.80}, not the row's id")
            decode_tool_result_bytes(result, ["result"])
        except ROW_ERRORS as exc:
            raise damaged(run_id, where, problem(exc)) from None
        results[tool_use_id] = result
    return results


def assemble_run(
    run_id: str,
    head: dict[str, Any],
    message_rows: list[tuple[int, Any]],
    result_rows: Iterable[tuple[str, Any]],
    cipher: RowCipher | None,
    redaction: RedactionPolicy | None,
    blobs: BlobFetch | None = None,
) -> StoredRun:
    """A loaded run from its decoded head and raw rows; missing or foreign rows are a damaged store."""
    expected = head["next_seq"] - head["start_seq"]
    if len(message_rows) != expected:
        raise StoreError(f"run {run_id!r}: {expected - len(message_rows)} message rows are missing; the store is damaged")
    if redaction is not None:
        head = redaction.fill(run_id, head)
    messages = decode_messages(run_id, iter(message_rows), cipher, blobs)
    results = decode_results(run_id, iter(result_rows), cipher, cycle=head["cursor"]["cycle_index"], blobs=blobs)
    check_open_cycle(run_id, head["cursor"], messages, results)
    return StoredRun(run_id, head, messages, results)


def stored_at(run_id: str, step: Step, messages: list[Message], results: dict[str, ToolResult]) -> StoredRun:
    """The run as it was at ``step``: its head copy, the live messages then, the results then.

    ``results`` are the rows of the step head's cycle (some may have been recorded after the
    step; only those the step names are kept). A row answering no call of that cycle, or a
    result the step names without a row, is a damaged store.
    """
    check_open_cycle(run_id, step.head["cursor"], messages, results)
    missing = [ident for ident in step.results if ident not in results]
    if missing:
        raise damaged(run_id, f"steps step {step.step}", f"it records tool results {missing!r:.200} that have no row")
    kept = set(step.results)
    return StoredRun(run_id, step.head, messages, {k: v for k, v in results.items() if k in kept})


def summarize_row(run_id: str, text: Any, cipher: RowCipher | None = None, *, rev: int | None = None) -> RunSummary:
    """The ``list_runs`` line of a run from its raw head row; a head that cannot be read gives a
    ``corrupt`` summary whose ``problem`` says why, so one damaged run never hides the others."""
    try:
        return summary_of(run_id, decode_head(run_id, text, cipher, rev=rev))
    except StoreError as exc:
        return RunSummary(run_id, CORRUPT, turns=0, cycles=0, total_tokens=0, created_at=None, updated_at=None, problem=str(exc))
