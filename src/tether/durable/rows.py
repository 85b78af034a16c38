"""The row codec of the durable stores: every row to text, and text back to rows.

A store only decides where rows go (tables, a dict); what a row holds is decided here once.
Every row is JSON text (bytes inside messages as ``{"$b64": ...}`` envelopes), sealed by the
store's cipher when it has one (:mod:`tether.durable.crypto`); the head, and the head copy in a
step row, lose the state keys the redaction policy keeps out of the store. Nothing is pickled,
so loading cannot run code.

The rows, by table: the *head* (one per run, replaced at every step), *messages* (numbered by
``seq``), *results* (the tool results of the open cycle, by cycle and ``toolUseId``) and
*steps* (the time-travel history, :mod:`tether.durable.history`). A sealed row is bound to its
place: the cipher authenticates it together with a :class:`~tether.durable.crypto.RowPlace`
(table, run id, position), so the encode functions take the run id and the decode functions
the position they read the row from.

**Every read path is total.** Reading a row parses it (with a nesting bound, so a deeply
nested row is refused instead of exhausting the interpreter's stack), opens its seal, and
validates it: the head (:func:`check_head`), messages, tool results (valid content, the
``toolUseId`` of their key, and in a run in its tools phase an answer to a tool call of the
last live message) and steps. Any failure is a :class:`~tether.errors.StoreError` worded
``run 'X': <table> <position>: <problem>; the store is damaged``, never a ``KeyError`` or a
``RecursionError`` deeper in; :func:`summarize_row` turns a bad head into a ``corrupt`` summary
so one damaged run never hides the others from ``list_runs``.
"""

from __future__ import annotations

import base64
import binascii
import json
import zlib
from collections.abc import Callable, Collection, Iterable, Iterator
from typing import Any

from .._json import MAX_DEPTH, nesting_exceeds, parse_json
from .._json import dumps_compact as dumps
from .._messages import check_tool_result as _check_tool_result
from .._messages import decode_message_bytes, decode_tool_result_bytes, validate_messages, validate_system_prompt
from ..checkpoint import check_metrics
from ..errors import ShapeError, StoreError, json_path
from ..loop.core import tool_uses_of
from ..snapshot.validation import check_cursor, check_interrupt_state, check_manager_state
from ..types import Message, ToolResult
from .crypto import RowCipher, RowPlace, is_envelope
from .history import CORRUPT, STATUSES, STEP_POSITIONS, RunSummary, Step, model_figures, summary_of
from .incarnation import INCARNATION, INCARNATION_PATTERN, PARENT_INCARNATION, incarnation_of
from .packing import (
    BLOB_FIELDS,
    BLOB_MIN,
    BLOB_REF,
    KEYFRAME_EVERY,
    HeadPacker,
    apply,
    blob_id,
    is_ref,
    is_result_ref,
    predicted,
    refs_of,
    unpack_head,
)
from .redaction import RedactionPolicy
from .store import (
    RUN_ID_PATTERN,
    SCHEMA_VERSION,
    EncodedWrite,
    Lease,
    PreparedWrite,
    StoredRun,
    check_row_sizes,
    head_revision,
    validate_run_id,
)

MAX_ROW_DEPTH = MAX_DEPTH
"""The deepest nesting of arrays and objects a row may have (written or read): the bound of
every JSON text Tether reads (:data:`tether._json.MAX_DEPTH`), measured before parsing; writes
refuse rows deeper than this so that every row written can be read back."""

_Errors = (ShapeError, TypeError, ValueError, KeyError, AttributeError, RecursionError)
"""What parsing or validating a damaged row can raise; each becomes a StoreError."""


def _damaged(run_id: str, where: str, problem: str) -> StoreError:
    """The error for a row that is not what Tether wrote: names the run, the table and the position."""
    return StoreError(f"run {run_id!r}: {where}: {problem}; the store is damaged")


def _problem(exc: BaseException) -> str:
    """A short description of what parsing or validating a row raised."""
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    if isinstance(exc, ShapeError):
        return str(exc)
    text = str(exc)
    return f"{type(exc).__name__}: {text[:200]}" if text else type(exc).__name__


# -- writing ---------------------------------------------------------------------------------


def _text(value: Any, run_id: str, where: str | RowPlace | None) -> str:
    """JSON text of a row; a row nested deeper than :data:`MAX_ROW_DEPTH` is refused (``where``
    names it in the error, worded only then: this runs for every row written)."""
    text = dumps(value)
    if nesting_exceeds(text):
        named = "a row" if where is None else where if isinstance(where, str) else _where(where)
        raise StoreError(
            f"run {run_id!r}: cannot store {named}: it nests arrays and objects more than {MAX_ROW_DEPTH} levels deep "
            "(a store reads no deeper rows back)"
        )
    return text


def _sealed(envelope: dict[str, Any]) -> str:
    return json.dumps(envelope, separators=(",", ":"))


STEP_DICTIONARY_V1 = (
    b'{"step":1,"position":"turn_start","cycle_index":0,"created_at":"2026-01-01T00:00:00.000000Z","head":{"schema_version":3,'
    b'"rev":1,"start_seq":0,"next_seq":1,"cursor":{"phase":"model","cycle_index":0,"invocation_cycles":0,"invocation_tokens":0,'
    b'"results":{},"started":[],"pending_pause":null,"structured_output":null,"corrective_turn_used":false,"stop_reason":null},'
    b'"metrics":{"cycle_count":0,"tool_call_count":0,"model_call_count":0,"usage":{"input_tokens":0,"output_tokens":0,'
    b'"total_tokens":0},"model_latency_ms":0.0,"tools":{}},"model_state":{},"state":{},"conversation_manager_state":{},'
    b'"interrupt_state":{},"system_prompt":null,"status":"running","turns":1,"steps":1,"created_at":"2026-01-01T00:00:00.000000Z",'
    b'"updated_at":"2026-01-01T00:00:00.000000Z"}}'
    b'{"step":3,"position":"after_tools","cycle_index":0,"created_at":"2026-01-01T00:00:00.000000Z","tools":[{"toolUseId":'
    b'"tooluse_","name":"","error":false,"duration_ms":0.1,"in_doubt":false}],"delta":{"rev":[4],"next_seq":[3],"cursor":'
    b'{"phase":["model"],"cycle_index":[1]},"metrics":{"tool_call_count":[1],"tools":{"":{"calls":[1],"errors":[0],'
    b'"total_duration_ms":[0.1]}}},"status":["finished"],"stop_reason":["end_turn"]}}'
    b'{"step":2,"position":"after_model","cycle_index":0,"created_at":"2026-01-01T00:00:00.000000Z","delta":{"rev":[2],'
    b'"next_seq":[2],"cursor":{"phase":["tools"],"invocation_cycles":[1],"invocation_tokens":[15]},"metrics":{"cycle_count":[1],'
    b'"model_call_count":[1],"usage":{"input_tokens":[10],"output_tokens":[5],"total_tokens":[15]},"model_latency_ms":[0.1]},'
    b'"model_state":{}}}'
)
"""The preset dictionary of compressed step rows (``z1:``): typical step rows, so that a row of
a few hundred characters compresses to about a quarter. Frozen: rows written with it must stay
readable, so a better dictionary is a new prefix (``z2:``), never an edit of this one."""
_ZIPPED = "z1:"
_ZIPPED_BYTES = b"z1:"
_MAX_STEP_TEXT = 64 * 1024 * 1024
"""The largest step row text a compressed row may inflate to (a bound against a crafted row)."""


def zip_step(text: str) -> bytes | str:
    """A step row's JSON text compressed: ``b"z1:"`` and the raw deflate of the text with
    :data:`STEP_DICTIONARY_V1` (a store that keeps only text stores :func:`zip_text` of it), or
    ``text`` itself when that is not shorter."""
    # A 2 KiB window covers the dictionary and a row, and small tables are quick to set up.
    packer = zlib.compressobj(6, zlib.DEFLATED, -11, 2, zlib.Z_DEFAULT_STRATEGY, STEP_DICTIONARY_V1)
    zipped = _ZIPPED_BYTES + packer.compress(text.encode("utf-8", "surrogatepass")) + packer.flush()
    return zipped if len(zipped) < len(text) else text


def zip_text(row: bytes | str) -> str:
    """A step row as text: a compressed row as ``z1:<base64>`` (for stores of text columns)."""
    return row if isinstance(row, str) else _ZIPPED + base64.b64encode(row[len(_ZIPPED_BYTES) :]).decode("ascii")


def is_zipped(row: Any) -> bool:
    """True for a compressed step row, as bytes or as text."""
    return (isinstance(row, bytes) and row.startswith(_ZIPPED_BYTES)) or (isinstance(row, str) and row.startswith(_ZIPPED))


def unzip_step(row: bytes | str) -> str:
    """The JSON text of a step row written by :func:`zip_step` (ValueError when it is damaged)."""
    try:
        if isinstance(row, bytes):
            data = row[len(_ZIPPED_BYTES) :]
        else:
            data = base64.b64decode(row[len(_ZIPPED) :], validate=True)
        inflater = zlib.decompressobj(-15, STEP_DICTIONARY_V1)
        out = inflater.decompress(data, _MAX_STEP_TEXT) + inflater.flush()
    except (binascii.Error, zlib.error) as exc:
        raise ValueError(f"a compressed step row does not inflate ({exc})") from None
    if inflater.unconsumed_tail or not inflater.eof:
        raise ValueError("a compressed step row is truncated or inflates past its bound")
    return out.decode("utf-8", "surrogatepass")


def _where(place: RowPlace) -> str:
    """How errors name a row: ``messages seq 3``, ``results cycle 2 toolUseId 'x'``, ``steps step 4``, ``head``."""
    if place.table == "messages":
        return f"messages seq {place.position}"
    if place.table == "results":
        cycle, _, ident = str(place.position).partition("/")
        return f"results cycle {cycle} toolUseId {ident!r}"
    if place.table == "steps":
        return f"steps step {place.position}"
    return place.table


def encode_row(value: Any, cipher: RowCipher | None = None, place: RowPlace | None = None) -> str:
    """JSON text of a row (bytes become base64 envelopes), sealed by ``cipher`` at ``place``.

    ``place`` is required with a cipher: a sealed row is bound to its table, run and position.
    """
    text = _text(value, "?" if place is None else place.run_id, place)
    if cipher is None:
        return text
    if place is None:
        raise StoreError("a sealed row needs its place (table, run id, position)")
    return _sealed(cipher.seal(text, place))


def encode_head(head: dict[str, Any], cipher: RowCipher | None, redaction: RedactionPolicy | None, *, run_id: str) -> str:
    """JSON text of a head row, without the state keys ``redaction`` keeps out of the store.

    Sealed, the head is bound to its revision ``head["rev"]``, which the envelope also carries
    in clear as ``"rev"`` (authenticated) so that a reader can rebuild the place.
    """
    return _head_row(head, _head_text(head, redaction, run_id), cipher, run_id)


def _head_text(head: dict[str, Any], redaction: RedactionPolicy | None, run_id: str) -> str:
    """The plaintext JSON of a head (redacted state keys left out)."""
    return _text(head if redaction is None else redaction.strip(head), run_id, "head")


def _head_row(head: dict[str, Any], text: str, cipher: RowCipher | None, run_id: str) -> str:
    if cipher is None:
        return text
    rev = head.get("rev")
    if type(rev) is not int or rev < 0:
        raise StoreError(f"run {run_id!r}: cannot seal a head whose rev is {rev!r} (a non-negative integer is required)")
    envelope = cipher.seal(text, RowPlace("head", run_id, rev))
    return _sealed({**envelope, "rev": rev})


def encode_step(step: dict[str, Any], cipher: RowCipher | None, redaction: RedactionPolicy | None, *, run_id: str) -> str:
    """JSON text of a step row holding its whole head (the form of schema 2, still read), bound
    to its number; the head copy loses the redacted state keys."""
    if redaction is not None:
        step = {**step, "head": redaction.strip(step["head"])}
    return encode_row(step, cipher, RowPlace("steps", run_id, int(step["step"])))


def encode_write(
    head: dict[str, Any],
    messages: list[Message],
    results: dict[str, ToolResult],
    step: dict[str, Any] | None,
    cipher: RowCipher | None,
    redaction: RedactionPolicy | None,
    *,
    run_id: str,
    packer: HeadPacker | None = None,
    max_row_bytes: int | None = None,
) -> EncodedWrite:
    """Encode the rows of ``RunStore.write`` for run ``run_id``.

    Messages are numbered from ``head["next_seq"] - len(messages)``, results belong to cycle
    ``head["cursor"]["cycle_index"]``, the step row to ``step["step"]`` and the head to
    ``head["rev"]``: the places sealed rows are bound to. The head is stored packed
    (:mod:`tether.durable.packing`): large values as blob rows and, with ``packer`` (a durable
    session's, which remembers what it stored), the step row's head as a delta against the
    previous step's and unchanged blobs not written again.
    """
    first = int(head["next_seq"]) - len(messages)
    cycle = int(head["cursor"]["cycle_index"])
    if packer is None:
        packer = HeadPacker(_blob_key(cipher))  # a write of its own: whole step head, blobs written again
    blobs: list[tuple[str, str]] = []
    message_rows: list[tuple[int, str]] = []
    full: list[tuple[int, str]] = []
    for i, message in enumerate(messages):
        place = RowPlace("messages", run_id, first + i)
        text = _text(message, run_id, place)
        full.append((first + i, text))
        if len(text) >= BLOB_MIN and message.get("role") == "user":
            text = _results_as_blobs(message, text, packer, blobs)
        message_rows.append((first + i, text if cipher is None else _sealed(cipher.seal(text, place))))
    result_rows: list[tuple[int, str, str]] = []
    full_results: list[tuple[int, str, str]] = []
    for tool_use_id, result in results.items():
        place = RowPlace("results", run_id, f"{cycle}/{tool_use_id}")
        text = _text(result, run_id, place)
        full_results.append((cycle, tool_use_id, text))
        if len(text) >= BLOB_MIN:
            text = dumps({BLOB_REF: packer.blob(text, blobs)})
        result_rows.append((cycle, tool_use_id, text if cipher is None else _sealed(cipher.seal(text, place))))
    check_row_sizes(run_id, full, full_results, max_row_bytes)  # the sizes as the tool returned them
    try:
        packed = packer.pack(head if redaction is None else redaction.strip(head))
    except ValueError:  # a field nested deeper than MAX_ROW_DEPTH: its text does not parse back
        packed = None
    if packed is None or nesting_exceeds(packed.text) or any(nesting_exceeds(text) for _, text in packed.blobs):
        raise StoreError(
            f"run {run_id!r}: cannot store head: it nests arrays and objects more than {MAX_ROW_DEPTH} levels deep "
            "(a store reads no deeper rows back)"
        )
    step_text = None
    if step is not None:
        previous = packer.previous_step_head
        kind, value = packer.step_head(packed, int(step["step"]), step.get("created_at"))
        row = _compact_step(step, previous if kind == "delta" else None)
        row[kind] = value
        place = RowPlace("steps", run_id, int(step["step"]))
        step_text = zip_step(_text(row, run_id, place)) if cipher is None else encode_row(row, cipher, place)
    return EncodedWrite(
        messages=message_rows,
        results=result_rows,
        head=_head_row(head, packed.text, cipher, run_id),
        step=step_text,
        blobs=[(ident, _blob_row(text, cipher, run_id, ident)) for ident, text in [*blobs, *packed.blobs]],
    )


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


_STEP_DEFAULTS: dict[str, Any] = {"stop_reason": None, "model": None, "tools": [], "in_doubt": [], "results": [], "forked_from": None}
"""Step fields a packed step row leaves out when they hold these values (read back as these)."""


def _compact_step(step: dict[str, Any], previous: dict[str, Any] | None) -> dict[str, Any]:
    """A step row without its head and without the fields that hold their default or follow
    from the head (``seq``, ``message_count``, ``status``) or, for a delta row, from the previous
    step's head ``previous`` (an ``after_model`` step's ``model`` figures); :func:`_expanded`
    restores them."""
    head = step["head"]
    row: dict[str, Any] = {}
    for key, value in step.items():
        if key == "head" or _STEP_DEFAULTS.get(key, _ABSENT) == value:
            continue
        if key == "model" and previous is not None and step.get("position") == "after_model":
            if _same_figures(value, _model_change(previous, head)):
                continue
        if key == "seq" and value == head.get("next_seq"):
            continue
        if key == "message_count" and value == int(head["next_seq"]) - int(head["start_seq"]):
            continue
        if key == "status" and value == head.get("status"):
            continue
        row[key] = value
    return row


_ABSENT = object()


def _same_figures(a: Any, b: Any) -> bool:
    """True when flat dicts of numbers ``a`` and ``b`` are equal as JSON (``1`` is not ``1.0``)."""
    return type(a) is dict and type(b) is dict and a == b and all(type(a[key]) is type(b[key]) for key in a)


def _model_change(previous: Any, head: Any) -> dict[str, Any] | None:
    """The model figures (latency, tokens) ``head``'s metrics add to ``previous``'s: what an
    ``after_model`` step records when its session's previous step is the step before it."""
    try:
        before, after = model_figures(previous["metrics"]), model_figures(head["metrics"])
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    return {key: after[key] - before[key] for key in after if key != "model_call_count"}


def _blob_row(text: str, cipher: RowCipher | None, run_id: str, ident: str) -> str:
    """A blob's row: its text as is, or sealed and bound to the run and its id."""
    return text if cipher is None else _sealed(cipher.seal(text, RowPlace("blobs", run_id, ident)))


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
) -> PreparedWrite:
    """Encode and check the rows of a write the way every store does (``RunStore.prepare``)."""
    validate_run_id(run_id)
    rows = encode_write(head, messages, results, step, cipher, redaction, run_id=run_id, packer=packer, max_row_bytes=max_row_bytes)
    return PreparedWrite(rows, head_revision(head), None if step is None else int(step["step"]), incarnation_of(head))


def _blob_key(cipher: RowCipher | None) -> bytes | None:
    """The key of a cipher's keyed blob ids (its ``blob_key``), if it has one."""
    key = getattr(cipher, "blob_key", None) if cipher is not None else None
    return key if isinstance(key, bytes) else None


def new_packer(cipher: RowCipher | None) -> HeadPacker:
    """A :class:`HeadPacker` for a store with ``cipher``: blob ids are keyed digests when the
    cipher offers a ``blob_key`` (see :func:`tether.durable.packing.blob_id`)."""
    return HeadPacker(_blob_key(cipher))


class RowWrites:
    """The write half every store shares: ``write`` is ``commit(prepare(...))`` and ``prepare``
    encodes with the store's ``cipher``, ``redaction`` and ``max_row_bytes``. A store sets those
    three attributes and implements :meth:`commit` (the I/O)."""

    cipher: RowCipher | None
    redaction: RedactionPolicy | None
    max_row_bytes: int | None

    def write(
        self,
        run_id: str,
        head: dict[str, Any],
        messages: list[Message],
        results: dict[str, ToolResult],
        step: dict[str, Any] | None = None,
        *,
        lease: Lease | None = None,
    ) -> None:
        """Append rows (and the step row) and replace the head, atomically (see ``RunStore.write``)."""
        self.commit(run_id, self.prepare(run_id, head, messages, results, step), lease=lease)

    def prepare(
        self,
        run_id: str,
        head: dict[str, Any],
        messages: list[Message],
        results: dict[str, ToolResult],
        step: dict[str, Any] | None,
        packer: HeadPacker | None = None,
    ) -> PreparedWrite:
        """Encode a write (pure CPU, on the caller's thread)."""
        return prepare_write(run_id, head, messages, results, step, self.cipher, self.redaction, self.max_row_bytes, packer)

    def commit(self, run_id: str, prepared: PreparedWrite, *, lease: Lease | None = None, wait: bool = True) -> bool:
        """Perform a prepared write (each store implements it)."""
        raise NotImplementedError


# -- reading ---------------------------------------------------------------------------------


def _parse(run_id: str, where: str, text: Any, what: str = "") -> Any:
    """The JSON value of row text; StoreError naming the run and the row when it is not JSON."""
    if not isinstance(text, str):
        raise _damaged(run_id, where, f"the row is not JSON text (a {type(text).__name__})")
    try:
        return parse_json(text)
    except (ValueError, RecursionError) as exc:
        raise _damaged(run_id, where, f"the row{what} is corrupt or truncated ({_problem(exc)})") from None


def _open(run_id: str, where: str, value: Any, cipher: RowCipher | None, place: RowPlace) -> Any:
    """A parsed row with its seal opened (``value`` itself when it is plain and that is allowed)."""
    if is_envelope(value):
        if cipher is None:
            kid = value.get("kid")
            raise StoreError(
                f"run {run_id!r}: {where} is encrypted (key id {kid!r}) but the store has no cipher; pass cipher=AESGCMCipher(...)"
            )
        return _parse(run_id, where, cipher.open(value, f"run {run_id!r}: {where}", place), " decrypted")
    if cipher is not None and not cipher.allow_plaintext:
        raise StoreError(
            f"run {run_id!r}: {where} is not encrypted but the store's cipher requires it; pass allow_plaintext=True to read rows "
            "written before encryption was turned on"
        )
    return value


def parse_row(run_id: str, where: str, text: Any, cipher: RowCipher | None, place: RowPlace) -> Any:
    """The JSON value of one row's text, its seal opened at ``place``; StoreError naming ``where``."""
    return _open(run_id, where, _parse(run_id, where, text), cipher, place)


def _count(value: Any, path: list[Any]) -> int:
    """``value`` if it is a non-negative int (not a bool), else ShapeError."""
    if type(value) is not int or value < 0:
        raise ShapeError(path, f"must be a non-negative integer, got {value!r:.60}")
    return value


def _newer(run_id: str, head: Any) -> StoreError | None:
    """The error for a head written by a newer Tether (checked before the shape, which may differ)."""
    version = head.get("schema_version") if isinstance(head, dict) else None
    if type(version) is int and version > SCHEMA_VERSION:
        return StoreError(
            f"run {run_id!r} was written by a newer Tether (schema {version}, this one knows {SCHEMA_VERSION}); upgrade Tether"
        )
    return None


def check_head(head: Any, root: str = "head") -> dict[str, Any]:
    """``head`` if it is a valid head row, with its metrics normalized; else ShapeError naming the field.

    Checks every field the stores, ``run_state_of``, ``summary_of`` and ``Timeline`` read:
    ``rev``, ``start_seq <= next_seq`` (non-negative ints), the cursor (what
    ``Cursor.from_dict`` needs), the metrics (as a checkpoint's, filled in where older heads
    lack a figure), the state dicts, the interrupt state, the system prompt and the timeline
    fields (``status``, ``turns``, ``steps``, ``created_at``, ``updated_at``, which heads
    written before step history existed lack), ``parent_run_id`` (nested runs only) and the
    incarnations (``incarnation``, ``parent_incarnation``; missing in legacy heads). ``schema_version`` defaults to the current one.
    """
    if type(head) is not dict:
        raise ShapeError([root], f"must be an object, got {type(head).__name__}")
    version = head.get("schema_version", SCHEMA_VERSION)
    if type(version) is not int or not 1 <= version <= SCHEMA_VERSION:
        raise ShapeError([root, "schema_version"], f"must be an integer from 1 to {SCHEMA_VERSION}, got {version!r:.60}")
    for key in ("rev", "start_seq", "next_seq"):
        _count(head.get(key), [root, key])
    if head["start_seq"] > head["next_seq"]:
        raise ShapeError([root, "start_seq"], f"({head['start_seq']}) is after next_seq ({head['next_seq']})")
    if "cursor" not in head:
        raise ShapeError([root, "cursor"], "is missing")
    check_cursor(head["cursor"], [root, "cursor"])
    if "metrics" not in head:
        raise ShapeError([root, "metrics"], "is missing")
    head["metrics"] = check_metrics(head["metrics"], f"{root}.metrics")
    for key in ("model_state", "state", "conversation_manager_state", "interrupt_state"):
        if head.get(key) is not None and type(head[key]) is not dict:
            raise ShapeError([root, key], f"must be an object, got {type(head[key]).__name__}")
    check_manager_state(head.get("conversation_manager_state") or {}, [root, "conversation_manager_state"])
    interrupts = head.get("interrupt_state") or {}
    check_interrupt_state(interrupts, [root, "interrupt_state"])
    if interrupts.get("metrics") is not None:
        check_metrics(interrupts["metrics"], f"{root}.interrupt_state.metrics")
    if interrupts.get("output_tool") is not None and type(interrupts["output_tool"]) is not str:
        raise ShapeError([root, "interrupt_state", "output_tool"], "must be a tool name (a string) or null")
    if head.get("system_prompt") is not None:
        validate_system_prompt(head["system_prompt"], [root, "system_prompt"])
    if head.get("status") is not None and head["status"] not in STATUSES:
        raise ShapeError([root, "status"], f"must be one of {', '.join(STATUSES)}, got {head['status']!r:.60}")
    for key in ("turns", "steps"):
        if key in head:
            _count(head[key], [root, key])
    for key in ("created_at", "updated_at"):
        if head.get(key) is not None and type(head[key]) is not str:
            raise ShapeError([root, key], f"must be a timestamp string, got {type(head[key]).__name__}")
    parent = head.get("parent_run_id")
    if parent is not None and (type(parent) is not str or not RUN_ID_PATTERN.fullmatch(parent)):
        raise ShapeError([root, "parent_run_id"], f"must be a run id or null, got {parent!r:.60}")
    for key in (INCARNATION, PARENT_INCARNATION):
        value = head.get(key)
        if value is not None and (type(value) is not str or not INCARNATION_PATTERN.fullmatch(value)):
            raise ShapeError([root, key], f"must be an incarnation (1-64 characters from A-Z a-z 0-9 _ -) or null, got {value!r:.60}")
    return head


BlobFetch = Callable[[Collection[str]], Iterable[tuple[Any, Any]]]
"""A store's reader of blob rows: given blob ids, the ``(id, text)`` rows it has of them."""


def _packed(head: Any) -> bool:
    """True when ``head`` may hold blob references (a head object written with schema 3 or later)."""
    return type(head) is dict and type(head.get("schema_version")) is int and head["schema_version"] >= 3


def _unpacked(run_id: str, where: str, head: Any, cipher: RowCipher | None, blobs: BlobFetch | None) -> Any:
    """``head`` with its blob references resolved (read through ``blobs``), or, without
    ``blobs``, with the fields stored as blobs left out (None)."""
    if not _packed(head):
        return head
    ids = refs_of(head)
    if not ids and not any(is_ref(head.get(name)) for name in BLOB_FIELDS):
        return head
    if blobs is None:
        return {key: None if key in BLOB_FIELDS and is_ref(value) else value for key, value in head.items()}
    return _resolve(run_id, where, head, decode_blobs(run_id, ids, blobs, cipher))


def _resolve(run_id: str, where: str, head: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    """``head`` with its references replaced by the blob ``values``; StoreError when one does not fit."""
    try:
        return unpack_head(head, values)
    except (KeyError, TypeError, ValueError) as exc:
        raise _damaged(run_id, where, f"a blob reference does not resolve ({_problem(exc)})") from None


def decode_blobs(run_id: str, ids: Collection[str], blobs: BlobFetch, cipher: RowCipher | None = None) -> dict[str, Any]:
    """The values of the blobs ``ids`` of run ``run_id``, read through ``blobs`` and verified.

    A blob row must be the JSON text its id is the digest of (a ``sha256:`` id is recomputed;
    an ``hmac:`` id names a sealed row, which the cipher authenticates bound to that id); a
    missing, altered or unsealed-where-sealing-is-required row is a damaged store.
    """
    wanted = set(ids)
    values: dict[str, Any] = {}
    if not wanted:
        return values
    for ident, text in blobs(sorted(wanted)):
        if ident not in wanted or ident in values:
            continue
        where = f"blobs {ident!r}"
        if not isinstance(text, str):
            raise _damaged(run_id, where, f"the row is not JSON text (a {type(text).__name__})")
        parsed = _parse(run_id, where, text)
        if is_envelope(parsed):
            values[ident] = _open(run_id, where, parsed, cipher, RowPlace("blobs", run_id, ident))
            continue
        if cipher is not None and not cipher.allow_plaintext:
            raise StoreError(f"run {run_id!r}: {where} is not encrypted but the store's cipher requires it")
        if not ident.startswith("sha256:") or blob_id(text) != ident:
            raise _damaged(run_id, where, "its text does not match its digest")
        values[ident] = parsed
    missing = wanted - values.keys()
    if missing:
        raise _damaged(run_id, f"blobs {sorted(missing)[0]!r}", "the row is missing")
    return values


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
    value = _parse(run_id, "head", text)
    clear: int | None = None
    if is_envelope(value) and "rev" in value:
        value = dict(value)
        found = value.pop("rev")
        if type(found) is not int or found < 0:
            raise _damaged(run_id, "head", f"the envelope's rev {found!r:.60} is not a non-negative integer")
        clear = found
    head = _open(run_id, "head", value, cipher, RowPlace("head", run_id, clear if clear is not None else rev))
    newer = _newer(run_id, head)
    if newer is not None:
        raise newer
    head = _unpacked(run_id, "head", head, cipher, blobs)
    try:
        checked = check_head(head)
    except _Errors as exc:
        raise _damaged(run_id, "head", _problem(exc)) from None
    if clear is not None and checked["rev"] != clear:
        raise _damaged(run_id, "head", f"the head's rev {checked['rev']} is not the rev {clear} its envelope was sealed at")
    if rev is not None and checked["rev"] != rev:
        raise StoreError(
            f"run {run_id!r}: head is at revision {checked['rev']} but the store's current revision is {rev}: "
            "an older head was written back (a rollback), or the store is damaged"
        )
    if incarnation is not None and checked.get(INCARNATION) is None:
        checked[INCARNATION] = incarnation
    return checked


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
            raise _damaged(run_id, f"messages seq {seqs[refs[0][0]]}", "it refers to a blob, and this read has no blobs")
        values = decode_blobs(run_id, ids, blobs, cipher)
        for _, content, i in refs:
            content[i] = {"toolResult": values[content[i]["toolResult"][BLOB_REF]]}
    try:
        validate_messages(messages, ["messages"])
        decode_message_bytes(messages)
    except ShapeError as exc:
        index = exc.path[1] if len(exc.path) > 1 and isinstance(exc.path[1], int) and exc.path[1] < len(seqs) else None
        if index is None:
            raise _damaged(run_id, "messages", str(exc)) from None
        problem = f"{json_path(['message', *exc.path[2:]])}: {exc.problem}"
        raise _damaged(run_id, f"messages seq {seqs[index]}", problem) from None
    except _Errors as exc:
        raise _damaged(run_id, "messages", _problem(exc)) from None
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
                raise _damaged(run_id, where, "it refers to a blob, and this read has no blobs")
            result = decode_blobs(run_id, [result[BLOB_REF]], blobs, cipher)[result[BLOB_REF]]
        try:
            _check_tool_result(result, ["result"])
            if result["toolUseId"] != tool_use_id:
                raise ShapeError(["result", "toolUseId"], f"is {result['toolUseId']!r:.80}, not the row's id")
            decode_tool_result_bytes(result, ["result"])
        except _Errors as exc:
            raise _damaged(run_id, where, _problem(exc)) from None
        results[tool_use_id] = result
    return results


def _optional(row: dict[str, Any], key: str, kind: type, what: str) -> Any:
    """``row[key]`` if it is None/missing or of ``kind``, else ShapeError."""
    value = row.get(key)
    if value is not None and type(value) is not kind:
        raise ShapeError(["step", key], f"must be {what} or null, got {type(value).__name__}")
    return value


def _number(value: Any) -> bool:
    return type(value) in (int, float)


def _check_step(row: Any, number: int) -> Step:
    """The :class:`Step` of a step row, every field checked (ShapeError naming it otherwise)."""
    if type(row) is not dict:
        raise ShapeError(["step"], f"must be an object, got {type(row).__name__}")
    if row.get("step") != number or type(row.get("step")) is not int:
        raise ShapeError(["step", "step"], f"is {row.get('step')!r:.60}, not the row's step number {number}")
    if row.get("position") not in STEP_POSITIONS:
        raise ShapeError(["step", "position"], f"must be one of {', '.join(STEP_POSITIONS)}")
    counts = {key: _count(row.get(key), ["step", key]) for key in ("cycle_index", "seq", "message_count")}
    if type(row.get("created_at")) is not str:
        raise ShapeError(["step", "created_at"], "must be a timestamp string")
    status = row.get("status") or "running"
    if status not in STATUSES:
        raise ShapeError(["step", "status"], f"must be one of {', '.join(STATUSES)}")
    model = _optional(row, "model", dict, "an object")
    if model is not None and not all(_number(figure) for figure in model.values()):
        raise ShapeError(["step", "model"], "must map figures to numbers")
    lists: dict[str, list[Any]] = {}
    for key in ("tools", "in_doubt", "results"):
        lists[key] = _optional(row, key, list, "a list") or []
    if not all(type(call) is dict and (call.get("duration_ms") is None or _number(call["duration_ms"])) for call in lists["tools"]):
        raise ShapeError(["step", "tools"], "must be a list of {toolUseId, name, error, duration_ms, in_doubt} objects")
    if not all(type(marker) is dict for marker in lists["in_doubt"]):
        raise ShapeError(["step", "in_doubt"], "must be a list of objects")
    if not all(type(ident) is str for ident in lists["results"]):
        raise ShapeError(["step", "results"], "must be a list of tool-use ids")
    if "head" not in row:
        raise ShapeError(["step", "head"], "is missing")
    return Step(
        step=number,
        position=row["position"],
        cycle_index=counts["cycle_index"],
        seq=counts["seq"],
        message_count=counts["message_count"],
        created_at=row["created_at"],
        status=status,
        stop_reason=_optional(row, "stop_reason", str, "a string"),
        model=model,
        tools=lists["tools"],
        in_doubt=lists["in_doubt"],
        results=lists["results"],
        forked_from=_optional(row, "forked_from", dict, "an object"),
        head=check_head(row["head"], "step.head"),
    )


def _step_row(run_id: str, number: int, text: Any, cipher: RowCipher | None) -> dict[str, Any]:
    """A step row parsed and opened (an object; StoreError naming the step otherwise)."""
    where = f"steps step {number}"
    if is_zipped(text):
        try:
            text = unzip_step(text)
        except (ValueError, UnicodeDecodeError) as exc:
            raise _damaged(run_id, where, _problem(exc)) from None
        if cipher is not None and not cipher.allow_plaintext:
            raise StoreError(f"run {run_id!r}: {where} is not encrypted but the store's cipher requires it")
    row = parse_row(run_id, where, text, cipher, RowPlace("steps", run_id, number))
    if type(row) is not dict:
        raise _damaged(run_id, where, f"step: must be an object, got {type(row).__name__}")
    newer = _newer(run_id, row.get("head"))
    if newer is not None:
        raise newer
    return row


def _replay(
    run_id: str, rows: list[tuple[int, dict[str, Any]]], cipher: RowCipher | None, blobs: BlobFetch | None
) -> list[Step]:
    """The steps of consecutive step rows, the first of which holds a whole head (a keyframe):
    each delta applies to the head of the step before it (see :mod:`tether.durable.packing`)."""
    heads: list[Any] = []
    items: list[tuple[int, dict[str, Any]]] = []
    previous: Any = None
    for number, row in rows:
        where = f"steps step {number}"
        if "head" in row:
            previous = row["head"]
        elif "delta" in row:
            if type(previous) is not dict:
                raise _damaged(run_id, where, "its head is a delta, and no earlier step holds a whole head")
            try:
                before = previous
                previous = apply(predicted(previous, number, row.get("created_at")), row["delta"])
                if row.get("position") == "after_model" and "model" not in row:
                    row = {**row, "model": _model_change(before, previous)}
            except (TypeError, ValueError) as exc:
                raise _damaged(run_id, where, f"its head delta does not apply ({_problem(exc)})") from None
        else:
            raise _damaged(run_id, where, "step.head: is missing")
        heads.append(previous)
        items.append((number, row))
    ids: set[str] = set()
    for head in heads:
        if _packed(head):
            ids |= refs_of(head)
    values = decode_blobs(run_id, ids, blobs, cipher) if ids and blobs is not None else {}
    steps = []
    for (number, row), head in zip(items, heads, strict=True):
        where = f"steps step {number}"
        if _packed(head):
            head = _unpacked(run_id, where, head, cipher, None) if blobs is None else _resolve(run_id, where, head, values)
        try:
            steps.append(_check_step(_expanded(row, head), number))
        except _Errors as exc:
            raise _damaged(run_id, where, _problem(exc)) from None
    return steps


def _expanded(row: dict[str, Any], head: Any) -> dict[str, Any]:
    """A step row with its head and the fields a packed row leaves out (see :func:`_compact_step`)."""
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


StepRows = Callable[[int, int], list[tuple[int, Any]]]
"""A store's reader of one run's step rows: given ``first`` and ``stop``, the ``(step, text)``
rows with ``first <= step < stop``, in order."""


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
        raise _damaged(run_id, f"steps step {number}", "no step up to it holds a whole head")
    return found


def _replay_last(run_id: str, rows: list[tuple[int, Any]], cipher: RowCipher | None, blobs: BlobFetch | None) -> Step | None:
    """The last of ``rows`` replayed from the last one holding a whole head (None: none does)."""
    parsed = [(n, _step_row(run_id, n, text, cipher)) for n, text in rows]
    start = next((i for i in range(len(parsed) - 1, -1, -1) if "head" in parsed[i][1]), None)
    return None if start is None else _replay(run_id, parsed[start:], cipher, blobs)[-1]


def decode_step(run_id: str, number: int, text: Any, cipher: RowCipher | None = None, blobs: BlobFetch | None = None) -> Step:
    """Parse, open and validate one step row holding a whole head; StoreError naming run and step."""
    return _replay(run_id, [(number, _step_row(run_id, number, text, cipher))], cipher, blobs)[0]


# -- assembling a loaded run -----------------------------------------------------------------


def _check_open_cycle(run_id: str, cursor: dict[str, Any], messages: list[Message], results: dict[str, ToolResult]) -> None:
    """In the tools phase every result row must answer a tool call of the last live message.

    A foreign row would otherwise count toward "every call answered" and close the cycle
    with a result the model never asked for.
    """
    if not results or cursor["phase"] != "tools":
        return
    last = messages[-1] if messages else None
    uses = {use["toolUseId"] for use in tool_uses_of(last)} if last is not None and last["role"] == "assistant" else set()
    for tool_use_id in results:
        if tool_use_id not in uses:
            where = f"results cycle {cursor['cycle_index']} toolUseId {tool_use_id!r}"
            raise _damaged(run_id, where, "the result answers no tool call of the open cycle (the last live message)")


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
    _check_open_cycle(run_id, head["cursor"], messages, results)
    return StoredRun(run_id, head, messages, results)


def stored_at(run_id: str, step: Step, messages: list[Message], results: dict[str, ToolResult]) -> StoredRun:
    """The run as it was at ``step``: its head copy, the live messages then, the results then.

    ``results`` are the rows of the step head's cycle (some may have been recorded after the
    step; only those the step names are kept). A row answering no call of that cycle, or a
    result the step names without a row, is a damaged store.
    """
    _check_open_cycle(run_id, step.head["cursor"], messages, results)
    missing = [ident for ident in step.results if ident not in results]
    if missing:
        raise _damaged(run_id, f"steps step {step.step}", f"it records tool results {missing!r:.200} that have no row")
    kept = set(step.results)
    return StoredRun(run_id, step.head, messages, {k: v for k, v in results.items() if k in kept})


def summarize_row(run_id: str, text: Any, cipher: RowCipher | None = None, *, rev: int | None = None) -> RunSummary:
    """The ``list_runs`` line of a run from its raw head row; a head that cannot be read gives a
    ``corrupt`` summary whose ``problem`` says why, so one damaged run never hides the others."""
    try:
        return summary_of(run_id, decode_head(run_id, text, cipher, rev=rev))
    except StoreError as exc:
        return RunSummary(run_id, CORRUPT, turns=0, cycles=0, total_tokens=0, created_at=None, updated_at=None, problem=str(exc))
