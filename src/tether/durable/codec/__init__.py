"""The row codec of the durable stores: every row to text, and text back to rows.

A store only decides where rows go (tables, a dict); what a row holds is decided here once.
Every row is JSON text (bytes inside messages as ``{"$b64": ...}`` envelopes), sealed by the
store's cipher when it has one (:mod:`tether.durable.crypto`); the head, and the head copy in a
step row, lose the state keys the redaction policy keeps out of the store. Nothing is pickled,
so loading cannot run code.

The rows, by table: the *head* (one per run, replaced at every step), *messages* (numbered by
``seq``), *results* (the tool results of the open cycle, by cycle and ``toolUseId``), *steps*
(the time-travel history, :mod:`tether.durable.history`) and *blobs* (large values, stored once;
:mod:`tether.durable.packing`). A sealed row is bound to its place: the cipher authenticates it
together with a :class:`~tether.durable.crypto.RowPlace` (table, run id, position), so the
encode functions take the run id and the decode functions the position they read the row from.

**Every read path is total.** Reading a row parses it (with a nesting bound, so a deeply
nested row is refused instead of exhausting the interpreter's stack), opens its seal, and
validates it: the head (:func:`check_head`), messages, tool results (valid content, the
``toolUseId`` of their key, and in a run in its tools phase an answer to a tool call of the
last live message) and steps. Any failure is a :class:`~tether.errors.StoreError` worded
``run 'X': <table> <position>: <problem>; the store is damaged``, never a ``KeyError`` or a
``RecursionError`` deeper in; :func:`summarize_row` turns a bad head into a ``corrupt`` summary
so one damaged run never hides the others from ``list_runs``.

One concept per module:

- :mod:`~tether.durable.codec.parse`: one row's text parsed and its seal opened, and the
  wording of a damaged row's error;
- :mod:`~tether.durable.codec.encode`: the rows of a write, sealed and bound to their places
  (:func:`prepare_write`);
- :mod:`~tether.durable.codec.decode`: head, message and result rows read back, and a loaded
  run assembled from them;
- :mod:`~tether.durable.codec.steps`: step rows compacted when written and rebuilt (from the
  nearest whole head) when read;
- :mod:`~tether.durable.codec.blobs`: blob rows verified and resolved into heads;
- :mod:`~tether.durable.codec.compress`: compressed step rows (``z1:``);
- :mod:`~tether.durable.codec.validation`: the checks of a decoded head, step and open cycle.

The names stores and tools use are re-exported here (``from tether.durable.codec import decode_head``).
"""

from __future__ import annotations

from .blobs import BlobFetch, decode_blobs
from .compress import STEP_DICTIONARY_V1, is_zipped, unzip_step, zip_step, zip_text
from .decode import assemble_run, decode_head, decode_messages, decode_results, merge_head_delta, stored_at, summarize_row
from .encode import encode_head, encode_row, encode_step, new_packer, prepare_write
from .parse import MAX_ROW_DEPTH, parse_row
from .steps import StepRows, decode_step, decode_step_at, decode_steps, decode_steps_after
from .validation import check_head

__all__ = [
    "MAX_ROW_DEPTH",
    "STEP_DICTIONARY_V1",
    "BlobFetch",
    "StepRows",
    "assemble_run",
    "check_head",
    "decode_blobs",
    "decode_head",
    "decode_messages",
    "decode_results",
    "decode_step",
    "decode_step_at",
    "decode_steps",
    "decode_steps_after",
    "encode_head",
    "encode_row",
    "encode_step",
    "merge_head_delta",
    "is_zipped",
    "new_packer",
    "parse_row",
    "prepare_write",
    "stored_at",
    "summarize_row",
    "unzip_step",
    "zip_step",
    "zip_text",
]
