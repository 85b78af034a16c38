"""Writing: every row of a write to JSON text, sealed and bound to its place, the head packed.

A row nested deeper than :data:`~tether.durable.codec.parse.MAX_ROW_DEPTH` is refused, so
that every row written can be read back; the head and the head copy in a step row lose the
state keys the redaction policy keeps out of the store.
"""

from __future__ import annotations

import json
from typing import Any

from ..._json import dumps_compact as dumps
from ..._json import member_key_text, nesting_exceeds
from ...errors import StoreError
from ...types import Message, ToolResult
from ..crypto import RowCipher, RowPlace
from ..incarnation import incarnation_of
from ..packing import BLOB_MIN, BLOB_REF, HeadPacker, PackedHead
from ..redaction import RedactionPolicy
from ..store import EncodedWrite, PreparedWrite, check_row_sizes, head_revision, validate_run_id
from .compress import zip_step, zip_text
from .parse import MAX_ROW_DEPTH, where_of
from .steps import compact_step, head_figures


def row_text(value: Any, run_id: str, where: str | RowPlace | None) -> str:
    """JSON text of a row; a row nested deeper than :data:`MAX_ROW_DEPTH` is refused (``where``
    names it in the error, worded only then: this runs for every row written)."""
    text = dumps(value)
    if nesting_exceeds(text):
        raise _too_deep(run_id, where)
    return text


def _too_deep(run_id: str, where: str | RowPlace | None) -> StoreError:
    """The error refusing a row nested deeper than :data:`MAX_ROW_DEPTH`."""
    named = "a row" if where is None else where if isinstance(where, str) else where_of(where)
    return StoreError(
        f"run {run_id!r}: cannot store {named}: it nests arrays and objects more than {MAX_ROW_DEPTH} levels deep "
        "(a store reads no deeper rows back)"
    )


def sealed(envelope: dict[str, Any]) -> str:
    return json.dumps(envelope, separators=(",", ":"))


def encode_row(value: Any, cipher: RowCipher | None = None, place: RowPlace | None = None) -> str:
    """JSON text of a row (bytes become base64 envelopes), sealed by ``cipher`` at ``place``.

    ``place`` is required with a cipher: a sealed row is bound to its table, run and position.
    """
    text = row_text(value, "?" if place is None else place.run_id, place)
    if cipher is None:
        return text
    if place is None:
        raise StoreError("a sealed row needs its place (table, run id, position)")
    return sealed(cipher.seal(text, place))


def encode_head(head: dict[str, Any], cipher: RowCipher | None, redaction: RedactionPolicy | None, *, run_id: str) -> str:
    """JSON text of a head row, without the state keys ``redaction`` keeps out of the store.

    Sealed, the head is bound to its revision ``head["rev"]``, which the envelope also carries
    in clear as ``"rev"`` (authenticated) so that a reader can rebuild the place.
    """
    return _head_row(head, _head_text(head, redaction, run_id), cipher, run_id)


def _head_text(head: dict[str, Any], redaction: RedactionPolicy | None, run_id: str) -> str:
    """The plaintext JSON of a head (redacted state keys left out)."""
    return row_text(head if redaction is None else redaction.strip(head), run_id, "head")


def _head_row(head: dict[str, Any], text: str, cipher: RowCipher | None, run_id: str) -> str:
    if cipher is None:
        return text
    rev = head.get("rev")
    if type(rev) is not int or rev < 0:
        raise StoreError(f"run {run_id!r}: cannot seal a head whose rev is {rev!r} (a non-negative integer is required)")
    envelope = cipher.seal(text, RowPlace("head", run_id, rev))
    return sealed({**envelope, "rev": rev})


def encode_step(step: dict[str, Any], cipher: RowCipher | None, redaction: RedactionPolicy | None, *, run_id: str) -> str:
    """JSON text of a step row holding its whole head (the form of schema 2, still read), bound
    to its number; the head copy loses the redacted state keys."""
    if redaction is not None:
        step = {**step, "head": redaction.strip(step["head"])}
    return encode_row(step, cipher, RowPlace("steps", run_id, int(step["step"])))


def prepare_write(
    run_id: str,
    head: dict[str, Any],
    messages: list[Message],
    results: dict[str, ToolResult],
    step: dict[str, Any] | None,
    cipher: RowCipher | None,
    redaction: RedactionPolicy | None,
    max_row_bytes: int | None,
    packer: HeadPacker | None = None,
    *,
    head_deltas: bool = False,
) -> PreparedWrite:
    """Encode and check the rows of a write the way every store does (``RunStore.prepare``).

    Messages are numbered from ``head["next_seq"] - len(messages)``, results belong to cycle
    ``head["cursor"]["cycle_index"]``, the step row to ``step["step"]`` and the head to
    ``head["rev"]``: the places sealed rows are bound to. The head is stored packed
    (:mod:`tether.durable.packing`): large values as blob rows and, with ``packer`` (a durable
    session's, which remembers what it stored), the step row's head as a delta against the
    previous step's and unchanged blobs not written again. With ``head_deltas`` (a store that
    keeps heads as deltas; never with a cipher: a sealed head is bound whole to its revision) and
    a packer, the write also carries the head as a delta against the last head written whole.
    """
    validate_run_id(run_id)
    first = int(head["next_seq"]) - len(messages)
    cycle = int(head["cursor"]["cycle_index"])
    own_packer = packer
    if packer is None:
        packer = HeadPacker(_blob_key(cipher))  # a write of its own: whole step head, blobs written again
    blobs: list[tuple[str, str]] = []
    message_rows, full = _message_rows(messages, first, cipher, packer, blobs, run_id)
    result_rows, full_results = _result_rows(results, cycle, cipher, packer, blobs, run_id)
    check_row_sizes(run_id, full, full_results, max_row_bytes)  # the sizes as the tool returned them
    packed = _packed_head(head, redaction, packer, run_id)
    step_text = None if step is None else _step_row(step, packed, cipher, packer, run_id)
    rev = head_revision(head)
    delta = packer.head_delta(packed, rev) if head_deltas and cipher is None and rev is not None and own_packer is not None else None
    rows = EncodedWrite(
        messages=message_rows,
        results=result_rows,
        head=_head_row(head, packed.text, cipher, run_id),
        step=step_text,
        blobs=[(ident, _blob_row(text, cipher, run_id, ident)) for ident, text in [*blobs, *packed.blobs]],
        head_delta=None if delta is None else zip_text(zip_step(delta[0])),
        head_base=None if delta is None else delta[1],
    )
    return PreparedWrite(rows, rev, None if step is None else int(step["step"]), incarnation_of(head))


def _message_rows(
    messages: list[Message], first: int, cipher: RowCipher | None, packer: HeadPacker, blobs: list[tuple[str, str]], run_id: str
) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """The ``(seq, text)`` rows of ``messages`` numbered from ``first`` (large tool results of a
    user message as blobs, added to ``blobs``), and the rows' whole texts (for the size check)."""
    rows: list[tuple[int, str]] = []
    full: list[tuple[int, str]] = []
    for seq, message in enumerate(messages, first):
        text = dumps(message)
        if nesting_exceeds(text):  # the row's place made only when needed (an error, a seal): ~1 µs each
            raise _too_deep(run_id, RowPlace("messages", run_id, seq))
        full.append((seq, text))
        if len(text) >= BLOB_MIN and message.get("role") == "user":
            text = _results_as_blobs(message, text, packer, blobs)
        rows.append((seq, text if cipher is None else sealed(cipher.seal(text, RowPlace("messages", run_id, seq)))))
    return rows, full


def _result_rows(
    results: dict[str, ToolResult], cycle: int, cipher: RowCipher | None, packer: HeadPacker, blobs: list[tuple[str, str]], run_id: str
) -> tuple[list[tuple[int, str, str]], list[tuple[int, str, str]]]:
    """The ``(cycle, toolUseId, text)`` rows of ``results`` (a large one as a blob, added to
    ``blobs``), and the rows' whole texts (for the size check)."""
    rows: list[tuple[int, str, str]] = []
    full: list[tuple[int, str, str]] = []
    for tool_use_id, result in results.items():
        place = RowPlace("results", run_id, f"{cycle}/{tool_use_id}")
        text = row_text(result, run_id, place)
        full.append((cycle, tool_use_id, text))
        if len(text) >= BLOB_MIN:
            text = dumps({BLOB_REF: packer.blob(text, blobs)})
        rows.append((cycle, tool_use_id, text if cipher is None else sealed(cipher.seal(text, place))))
    return rows, full


def _packed_head(head: dict[str, Any], redaction: RedactionPolicy | None, packer: HeadPacker, run_id: str) -> PackedHead:
    """The head packed (redacted state keys left out); refused when it nests too deep to read back."""
    try:
        packed = packer.pack(head if redaction is None else redaction.strip(head))
    except ValueError:  # a field nested deeper than MAX_ROW_DEPTH: its text does not parse back
        packed = None
    if packed is None or nesting_exceeds(packed.text) or any(nesting_exceeds(text) for _, text in packed.blobs):
        raise StoreError(
            f"run {run_id!r}: cannot store head: it nests arrays and objects more than {MAX_ROW_DEPTH} levels deep "
            "(a store reads no deeper rows back)"
        )
    return packed


def _step_row(step: dict[str, Any], packed: PackedHead, cipher: RowCipher | None, packer: HeadPacker, run_id: str) -> str | bytes:
    """The step row: compacted, its head whole or a delta against the previous step's (as
    ``packer`` decides), compressed when not sealed."""
    previous = packer.previous_step_head
    before = packer.previous_step_figures
    kind, value, value_text = packer.step_record(packed, int(step["step"]), step.get("created_at"), head_figures(step["head"]))
    row = compact_step(step, previous if kind == "delta" else None, before)
    number = int(step["step"])
    if kind in row:  # not a step field: kept in its place, the row encoded whole
        row[kind] = value
        text = row_text(row, run_id, RowPlace("steps", run_id, number))
    else:
        text = _with_member(row, kind, value_text, run_id, number)
    return zip_step(text) if cipher is None else sealed(cipher.seal(text, RowPlace("steps", run_id, number)))


def _with_member(row: dict[str, Any], key: str, value_text: str, run_id: str, number: int) -> str:
    """:func:`row_text` of ``row`` with member ``key`` added last, whose value's text is
    ``value_text``: the head or delta text the packer already made is spliced in, not encoded
    again (measured: about 8 µs of the 12 a step row's encoding took)."""
    text = dumps(row)
    text = text[:-1] + ("," if len(text) > 2 else "") + member_key_text(key) + value_text + "}"
    if nesting_exceeds(text):
        raise _too_deep(run_id, RowPlace("steps", run_id, number))
    return text


def _results_as_blobs(message: Message, text: str, packer: HeadPacker, blobs: list[tuple[str, str]]) -> str:
    """The text of a results message whose large tool results are blob references
    (``{"toolResult": {"$blob": id}}``), or ``text`` when none is large."""
    content: list[Any] = []
    changed = False
    blocks: list[Any] = list(message["content"])
    for block in blocks:
        result = block.get("toolResult") if type(block) is dict else None
        if result is not None:
            result_text = dumps(result)
            if len(result_text) >= BLOB_MIN:
                block = {"toolResult": {BLOB_REF: packer.blob(result_text, blobs)}}
                changed = True
        content.append(block)
    return dumps({**message, "content": content}) if changed else text


def _blob_row(text: str, cipher: RowCipher | None, run_id: str, ident: str) -> str:
    """A blob's row: its text as is, or sealed and bound to the run and its id."""
    return text if cipher is None else sealed(cipher.seal(text, RowPlace("blobs", run_id, ident)))


def _blob_key(cipher: RowCipher | None) -> bytes | None:
    """The key of a cipher's keyed blob ids (its ``blob_key``), if it has one."""
    key = getattr(cipher, "blob_key", None) if cipher is not None else None
    return key if isinstance(key, bytes) else None


def new_packer(cipher: RowCipher | None) -> HeadPacker:
    """A :class:`HeadPacker` for a store with ``cipher``: blob ids are keyed digests when the
    cipher offers a ``blob_key`` (see :func:`tether.durable.packing.blob_id`)."""
    return HeadPacker(_blob_key(cipher))
