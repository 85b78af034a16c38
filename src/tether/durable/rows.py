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

import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

from pydantic_core import from_json

from .._json import dumps
from .._messages import check_tool_result as _check_tool_result
from .._messages import decode_message_bytes, decode_tool_result_bytes, validate_messages, validate_system_prompt
from ..checkpoint import check_metrics
from ..errors import ShapeError, StoreError, json_path
from ..loop.core import tool_uses_of
from ..snapshot.validation import check_cursor, check_interrupt_state, check_manager_state
from ..types import Message, ToolResult
from .crypto import RowCipher, RowPlace, is_envelope
from .history import CORRUPT, STATUSES, STEP_POSITIONS, RunSummary, Step, summary_of
from .redaction import RedactionPolicy
from .store import SCHEMA_VERSION, EncodedWrite, Lease, PreparedWrite, StoredRun, check_row_sizes, head_revision, validate_run_id

MAX_ROW_DEPTH = 512
"""The deepest nesting of arrays and objects a row may have (written or read).

Python's :mod:`json` parses nesting with the C stack and raises ``RecursionError`` on a deep
enough row (a 100,000-deep array is 200 kB of text), so a row is measured before it is parsed;
writes refuse rows deeper than this so that every row written can be read back.
"""

_Errors = (ShapeError, TypeError, ValueError, KeyError, AttributeError, RecursionError)
"""What parsing or validating a damaged row can raise; each becomes a StoreError."""

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def nesting_exceeds(text: str, limit: int = MAX_ROW_DEPTH) -> bool:
    """True when the JSON text ``text`` nests arrays/objects deeper than ``limit``.

    Counts brackets outside strings without recursion; text with no more than ``limit``
    opening brackets is accepted at once (two C-speed counts), which covers nearly every row.
    """
    if text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    for char in _NOT_BRACKET.sub("", _STRING.sub("", text)):
        if char == "[" or char == "{":
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _parse_json(text: str) -> Any:
    """Parse row text with a nesting bound (ValueError, or RecursionError, when it is not JSON).

    ``pydantic_core`` parses in Rust and refuses nesting past its own limit (about 200 levels)
    with a ValueError; what it refuses goes to :mod:`json`, after measuring the nesting.
    """
    try:
        return from_json(text, allow_inf_nan=False, cache_strings="keys")
    except ValueError:  # deeper than pydantic_core's limit, a lone surrogate, or not JSON
        pass
    if nesting_exceeds(text):
        raise ValueError(f"nested more than {MAX_ROW_DEPTH} levels deep")
    return json.loads(text, parse_constant=_refuse_constant)


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


def encode_step(
    step: dict[str, Any], cipher: RowCipher | None, redaction: RedactionPolicy | None, *, run_id: str, head_text: str | None = None
) -> str:
    """JSON text of a step row (bound to its number); the head copy loses the redacted state keys.

    ``head_text``, the plaintext JSON of ``step["head"]`` already encoded for the head row of
    the same write, is spliced in instead of encoding the head a second time.
    """
    place = RowPlace("steps", run_id, int(step["step"]))
    if head_text is None:
        if redaction is not None:
            step = {**step, "head": redaction.strip(step["head"])}
        return encode_row(step, cipher, place)
    body = _text({key: value for key, value in step.items() if key != "head"}, run_id, place)
    text = f'{body[:-1]}, "head": {head_text}}}'
    if nesting_exceeds(text):
        raise StoreError(f"run {run_id!r}: cannot store {_where(place)}: its head nests more than {MAX_ROW_DEPTH} levels deep")
    if cipher is None:
        return text
    return _sealed(cipher.seal(text, place))


def encode_write(
    head: dict[str, Any],
    messages: list[Message],
    results: dict[str, ToolResult],
    step: dict[str, Any] | None,
    cipher: RowCipher | None,
    redaction: RedactionPolicy | None,
    *,
    run_id: str,
) -> EncodedWrite:
    """Encode the rows of ``RunStore.write`` for run ``run_id``.

    Messages are numbered from ``head["next_seq"] - len(messages)``, results belong to cycle
    ``head["cursor"]["cycle_index"]``, the step row to ``step["step"]`` and the head to
    ``head["rev"]``: the places sealed rows are bound to.
    """
    first = int(head["next_seq"]) - len(messages)
    cycle = int(head["cursor"]["cycle_index"])
    head_text = _head_text(head, redaction, run_id)  # encoded once: the step row embeds the same head
    return EncodedWrite(
        messages=[(first + i, encode_row(message, cipher, RowPlace("messages", run_id, first + i))) for i, message in enumerate(messages)],
        results=[
            (cycle, tool_use_id, encode_row(result, cipher, RowPlace("results", run_id, f"{cycle}/{tool_use_id}")))
            for tool_use_id, result in results.items()
        ],
        head=_head_row(head, head_text, cipher, run_id),
        step=None if step is None else encode_step(step, cipher, redaction, run_id=run_id, head_text=_shared(step, head, head_text)),
    )


def _shared(step: dict[str, Any], head: dict[str, Any], head_text: str) -> str | None:
    """The head's text when the step row embeds that very head (as durable sessions write it)."""
    return head_text if step.get("head") is head else None


def prepare_write(
    run_id: str,
    head: dict[str, Any],
    messages: list[Message],
    results: dict[str, ToolResult],
    step: dict[str, Any] | None,
    cipher: RowCipher | None,
    redaction: RedactionPolicy | None,
    max_row_bytes: int | None,
) -> PreparedWrite:
    """Encode and check the rows of a write the way every store does (``RunStore.prepare``)."""
    validate_run_id(run_id)
    rows = encode_write(head, messages, results, step, cipher, redaction, run_id=run_id)
    check_row_sizes(run_id, rows.messages, rows.results, max_row_bytes)
    return PreparedWrite(rows, head_revision(head), None if step is None else int(step["step"]))


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
        self, run_id: str, head: dict[str, Any], messages: list[Message], results: dict[str, ToolResult], step: dict[str, Any] | None
    ) -> PreparedWrite:
        """Encode a write (pure CPU, on the caller's thread)."""
        return prepare_write(run_id, head, messages, results, step, self.cipher, self.redaction, self.max_row_bytes)

    def commit(self, run_id: str, prepared: PreparedWrite, *, lease: Lease | None = None, wait: bool = True) -> bool:
        """Perform a prepared write (each store implements it)."""
        raise NotImplementedError


# -- reading ---------------------------------------------------------------------------------


def _parse(run_id: str, where: str, text: Any, what: str = "") -> Any:
    """The JSON value of row text; StoreError naming the run and the row when it is not JSON."""
    if not isinstance(text, str):
        raise _damaged(run_id, where, f"the row is not JSON text (a {type(text).__name__})")
    try:
        return _parse_json(text)
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
    written before step history existed lack). ``schema_version`` defaults to the current one.
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
    return head


def decode_head(run_id: str, text: Any, cipher: RowCipher | None = None, *, rev: int | None = None) -> dict[str, Any]:
    """Parse, open and validate a head row; StoreError naming the run on any failure.

    A sealed head is bound to its revision, which its envelope carries in clear (``"rev"``).
    ``rev`` is the revision the store believes current (its own record of it, e.g. a column
    written with the head): a head at another revision is refused, which catches an old head
    written back (a rollback) even though that head is itself authentic. Without ``rev`` only
    the head's own consistency is checked; a version-2 head without a clear revision cannot be
    verified then.
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
    return checked


def decode_messages(run_id: str, rows: Iterator[tuple[int, Any]], cipher: RowCipher | None = None) -> list[Message]:
    """Parse, open and validate message rows (``(seq, text)``); StoreError naming run and seq."""
    messages: list[Any] = []
    seqs: list[int] = []
    for seq, text in rows:
        where = f"messages seq {seq}"
        messages.append(parse_row(run_id, where, text, cipher, RowPlace("messages", run_id, seq)))
        seqs.append(seq)
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


def decode_results(run_id: str, rows: Iterator[tuple[str, Any]], cipher: RowCipher | None = None, *, cycle: int) -> dict[str, ToolResult]:
    """Parse, open and validate the tool-result rows of cycle ``cycle`` (``(toolUseId, text)``).

    Each must be a valid tool result (content a list of valid items) whose ``toolUseId`` is the
    row's; StoreError naming the run, the cycle and the id otherwise.
    """
    results: dict[str, ToolResult] = {}
    for tool_use_id, text in rows:
        where = f"results cycle {cycle} toolUseId {tool_use_id!r}"
        result = parse_row(run_id, where, text, cipher, RowPlace("results", run_id, f"{cycle}/{tool_use_id}"))
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


def decode_step(run_id: str, number: int, text: Any, cipher: RowCipher | None = None) -> Step:
    """Parse, open and validate a step row (its head copy too); StoreError naming run and step."""
    where = f"steps step {number}"
    row = parse_row(run_id, where, text, cipher, RowPlace("steps", run_id, number))
    newer = _newer(run_id, row.get("head") if isinstance(row, dict) else None)
    if newer is not None:
        raise newer
    try:
        return _check_step(row, number)
    except _Errors as exc:
        raise _damaged(run_id, where, _problem(exc)) from None


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
) -> StoredRun:
    """A loaded run from its decoded head and raw rows; missing or foreign rows are a damaged store."""
    expected = head["next_seq"] - head["start_seq"]
    if len(message_rows) != expected:
        raise StoreError(f"run {run_id!r}: {expected - len(message_rows)} message rows are missing; the store is damaged")
    if redaction is not None:
        head = redaction.fill(run_id, head)
    messages = decode_messages(run_id, iter(message_rows), cipher)
    results = decode_results(run_id, iter(result_rows), cipher, cycle=head["cursor"]["cycle_index"])
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
