"""JSON discipline: validation with named paths, fast deep copies, and the bytes envelope.

Everything Tether persists is JSON. In memory, messages may hold ``bytes`` (image and document
sources, redacted reasoning); on the way out they become ``{"$b64": "<base64>"}`` envelopes and
on the way back in they are decoded at the places where bytes are allowed.

Deep copies come in three kinds, by what they accept (see "deep copies as JSON" below):
:func:`json_copy` (run data; bytes become envelopes), :func:`checked_json_copy` (application
data that must be pure JSON already) and :func:`json_roundtrip_copy` (values users hand over
as JSON, accepted as :mod:`json` accepts them, bytes refused). All three raise
:class:`~tether.errors.ShapeError` naming the first bad path; callers convert it to the error of
their context.

Deep copies of data already checked to be pure JSON use :mod:`marshal` as a C-speed copier
(:func:`freeze` / :func:`thaw`). A frozen blob never leaves the process and is only ever thawed
from bytes this module produced from plain JSON values, so it is a copy mechanism, not a storage
format: nothing persisted or received from outside is ever unmarshalled (or unpickled).

JSON text is written and read by ``pydantic_core`` (Rust, already a dependency through pydantic)
with :mod:`json` as the fallback for what it refuses (lone surrogates, very deep nesting, UTF-16
input). :func:`dump_json` is only ever given values already checked to be pure JSON, so the
conversions ``pydantic_core`` would apply to other types (tuples, sets, datetimes, NaN) never
happen; :func:`parse_json` yields exact JSON types only (see its note on overflowing numbers).
"""

from __future__ import annotations

import base64
import binascii
import gc
import json
import marshal
import math
import re
import reprlib
from json.encoder import c_make_encoder as _c_make_encoder  # type: ignore[attr-defined]
from typing import Any

from pydantic_core import from_json as _from_json
from pydantic_core import to_json as _to_json

from ._unicode import SURROGATE as _SURROGATE
from ._unicode import find_lone_surrogate, storable
from .errors import ShapeError, json_path

BYTES_KEY = "$b64"
_BYTES_MARKER = BYTES_KEY.encode("ascii")
_MARSHAL_VERSION = 4
_SCALARS: frozenset[type] = frozenset({str, int, bool, type(None)})
_isfinite = math.isfinite
_ADVICE = "store only dict, list, str, int, float, bool or None"


def _default(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {BYTES_KEY: base64.b64encode(bytes(value)).decode("ascii")}
    raise TypeError(type(value).__name__)


_encoder = json.JSONEncoder(default=_default, ensure_ascii=False, allow_nan=False, check_circular=True)
_plain_encoder = json.JSONEncoder(ensure_ascii=False, allow_nan=False)
_compact_encoder = json.JSONEncoder(default=_default, ensure_ascii=False, allow_nan=False, check_circular=True, separators=(",", ":"))
_compact_c_encoder: Any = (
    None
    if _c_make_encoder is None
    else _c_make_encoder(None, _default, json.encoder.encode_basestring, None, ":", ",", False, False, False)
)
"""``_compact_encoder``'s C encoder without circular-reference markers (see :func:`dumps_compact`)."""
_ascii_encoder = json.JSONEncoder(ensure_ascii=True, allow_nan=False, separators=(",", ":"))
_decode = json.JSONDecoder().decode
_INFINITY_TAIL = re.compile(b"\xf0[\x7f\xff]")
"""The last two bytes of the little-endian IEEE-754 images of +inf and -inf."""


_GC_PAUSE_BYTES = 32 * 1024
"""Inputs from this size up are parsed or thawed with the cyclic garbage collector paused.

Building a large document allocates tens of thousands of containers in one burst, and each
burst of allocations triggers collections that traverse every tracked object in the process
(on CPython 3.11 a 10,000-message snapshot loads 3x faster with the collector paused). A
parse creates no reference cycles, so pausing the collector for its duration frees nothing
later than it would have been; the collector is re-enabled at once (only if it was enabled),
and its next run takes the new objects in one pass.
"""
_gc_isenabled = gc.isenabled
_gc_disable = gc.disable
_gc_enable = gc.enable


MAX_DEPTH = 512
"""The deepest nesting of arrays and objects in JSON text Tether reads (or a store writes).

:mod:`json` parses nesting with the C stack and raises ``RecursionError`` on deep enough text (a
100,000-deep array is 200 kB), and every later walk of a parsed value recurses too; so text is
measured before :mod:`json` parses it (:func:`nesting_exceeds`), and deeper text is refused
with a ``ValueError`` by :func:`parse_json`, the one parser of untrusted JSON text (store rows,
snapshots and checkpoints as JSON, cassettes, a model's tool input). Values handed over as
Python objects are checked by guarded walks (:func:`is_json`, :func:`find_non_json`) that
report a value too deep for the interpreter as "nested too deeply".
"""

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def nesting_exceeds(text: str, limit: int = MAX_DEPTH) -> bool:
    """True when the JSON text ``text`` nests arrays/objects deeper than ``limit``.

    Counts brackets outside strings without recursion; text with no more than ``limit``
    opening brackets is accepted at once (two C-speed counts), which covers nearly every text.
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


_brief = reprlib.Repr()
_brief.maxlevel = 3
_brief.maxstring = _brief.maxother = 60


def brief(value: Any) -> str:
    """A short ``repr`` of ``value`` for an error message: bounded in depth and length (a value
    nested 1,000 deep shows as ``[[[[...]]]]``), and it never raises."""
    try:
        return _brief.repr(value)
    except Exception:  # a foreign object whose __repr__ fails
        return f"<{type(value).__name__}>"


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def dump_json(value: Any) -> bytes:
    """Compact UTF-8 JSON of ``value``, which the caller has checked to be pure JSON.

    ``pydantic_core`` writes it in one Rust pass; what it refuses (a string holding a lone
    surrogate) is written by :mod:`json` with ASCII escapes instead, which parses back the same.
    Raises ``TypeError``/``ValueError``/``RecursionError`` only for values that are not JSON
    after all.
    """
    try:
        return _to_json(value)
    except ValueError:  # PydanticSerializationError is a ValueError
        return _ascii_encoder.encode(value).encode("ascii")


def parse_json(text: str | bytes, *, max_depth: int | None = MAX_DEPTH) -> Any:
    """Parse JSON text into exact JSON types (dict, list, str, int, float, bool, None).

    ``NaN``/``Infinity`` literals are refused. A number too large for a float (``1e400``)
    parses as ``inf``, as in :mod:`json`: callers that need finite floats check with
    :func:`may_hold_infinity` or :func:`is_json`. Raises ``ValueError`` for anything that is not
    JSON, and for text nested deeper than ``max_depth`` (``"nested more than 512 levels
    deep"``); never ``RecursionError``. ``max_depth=None`` is for text Tether itself just wrote
    from values it holds (a snapshot's image, a recorded request), which it must read back as
    deep as it wrote them.
    """
    paused = len(text) >= _GC_PAUSE_BYTES and _gc_isenabled()
    if paused:
        _gc_disable()
    try:
        try:
            return _from_json(text, allow_inf_nan=False, cache_strings="keys")
        except ValueError:  # also nesting past its limit (~200), lone surrogates, UTF-16: json decides
            pass
        if not isinstance(text, str):
            text = text.decode(json.detect_encoding(text), "surrogatepass")  # UnicodeDecodeError is a ValueError
        if max_depth is not None and nesting_exceeds(text, max_depth):
            raise ValueError(f"nested more than {max_depth} levels deep")
        try:
            return json.loads(text, parse_constant=_refuse_constant)
        except RecursionError:  # within the bound, but the caller's stack is already deep
            raise ValueError("nested too deeply for the interpreter's stack") from None
    finally:
        if paused:
            _gc_enable()


def may_hold_infinity(blob: bytes) -> bool:
    """False when the frozen value certainly holds no infinite float (a C-speed scan).

    :mod:`marshal` writes every float as its 8-byte little-endian IEEE image, which for +/-inf
    ends in ``f0 7f``/``f0 ff``; neither pair occurs in a frozen string (they are not valid
    UTF-8), so a false positive needs the pair elsewhere (a big integer's digits, the middle of
    another float's image) and a false negative is impossible.
    """
    return _INFINITY_TAIL.search(blob) is not None


def dumps(value: Any) -> str:
    """Serialize JSON data, encoding any bytes as envelopes (text a UTF-8 store can keep: see
    :func:`tether._unicode.storable`)."""
    return storable(_encoder.encode(value))


def dumps_compact(value: Any) -> str:
    """:func:`dumps` without the spaces after ``,`` and ``:`` (store rows: ~10% smaller).

    The text is what ``_compact_encoder.encode`` writes, by one C encoder made once
    (:data:`_compact_c_encoder`): ``JSONEncoder.encode`` makes a new one at every call, which
    costs about 2 µs of a small row's 5, several times per save point. The shared encoder keeps
    no circular-reference markers (a shared markers dict would make concurrent encodings of one
    value look circular), so a circular value recurses until ``RecursionError``; any
    ``RecursionError`` is then encoded again by ``_compact_encoder``, which raises what it always
    raised (``ValueError`` for a circular value, ``RecursionError`` for a too deep one). Other
    errors are the same either way: both encoders walk a value in the same order.
    """
    if _compact_c_encoder is None or type(value) is str:
        return storable(_compact_encoder.encode(value))
    try:
        return storable("".join(_compact_c_encoder(value, 0)))
    except RecursionError:
        return storable(_compact_encoder.encode(value))


MEMBER_KEY_TEXTS: dict[str, str] = {}
"""The key texts :func:`member_key_text` has made, by key (at most 4,096): hot loops look a key up
here first and call :func:`member_key_text` only for a key not in it."""
_encode_string: Any = json.encoder.encode_basestring  # the C escaper of an ensure_ascii=False encoder


def member_texts(obj: dict[str, Any], subs: dict[str, dict[str, str]] | None = None) -> dict[str, str]:
    """The compact JSON text of each value of object ``obj``, by key, such that
    :func:`join_members` of them is exactly :func:`dumps_compact` of ``obj``.

    A store writes a run's head once per save point and compares it with the head it last
    wrote: by member texts, an unchanged member is found by one string comparison, with no
    diff of its value and no encoding of the whole head again. Scalars and empty containers are
    written here (one encoder call costs more than such a value's text); the rest by the
    encoder. Raises what :func:`dumps_compact` raises (``ValueError`` for a non-finite float,
    ``TypeError`` for what is not JSON).

    Args:
        obj: An object with string keys.
        subs: Where to put, by key, the member texts of each member that is a small object
            (at most :data:`SUB_MEMBERS_MAX` members), whose text is then made of them
            (None: every member encoded whole).
    """
    return members_and_text(obj, subs)[0]


def members_and_text(obj: dict[str, Any], subs: dict[str, dict[str, str]] | None = None) -> tuple[dict[str, str], str]:
    """:func:`member_texts` of ``obj`` and :func:`join_members` of them (the text of ``obj``),
    made in one pass: a second pass over the members to join them cost ~1 µs per object, and
    a head and its small object members are joined at every save point."""
    out: dict[str, str] = {}
    parts: list[str] = []
    encode = dumps_compact
    key_texts = MEMBER_KEY_TEXTS
    for key, value in obj.items():
        kind = type(value)
        if kind is int:
            text = int.__repr__(value)
        elif kind is str:
            text = _encode_string(value)
        elif value is None:
            text = "null"
        elif kind is bool:
            text = "true" if value else "false"
        elif kind is float and _isfinite(value):
            text = float.__repr__(value)
        elif (kind is dict or kind is list) and not value:
            text = "{}" if kind is dict else "[]"
        elif kind is dict and subs is not None and len(value) <= SUB_MEMBERS_MAX:
            subs[key], text = members_and_text(value)
        else:
            text = encode(value)
        out[key] = text
        parts.append((key_texts.get(key) or member_key_text(key)) + text)
    return out, "{" + ",".join(parts) + "}"


SUB_MEMBERS_MAX = 32
"""The most members an object member may have to be written member by member (see
:func:`member_texts`): a larger one is one encoder call."""


def member_key_text(key: str) -> str:
    """A member key's JSON text followed by ``:`` (cached: a head has the same few keys)."""
    text = MEMBER_KEY_TEXTS.get(key)
    if text is None:
        text = _encode_string(key) + ":"
        if len(MEMBER_KEY_TEXTS) < 4096:
            MEMBER_KEY_TEXTS[key] = text
    return text


def join_members(texts: dict[str, str]) -> str:
    """The compact JSON text of an object from its members' texts (see :func:`member_texts`)."""
    try:  # the key texts looked up in the cache directly: a call per key cost ~3 µs a save point
        return "{" + ",".join([MEMBER_KEY_TEXTS[key] + text for key, text in texts.items()]) + "}"
    except KeyError:  # a key not cached yet (or the cache is full)
        return "{" + ",".join([member_key_text(key) + text for key, text in texts.items()]) + "}"


def is_json_unguarded(value: Any) -> bool:
    """:func:`is_json` without its guard: circular or too-deep values raise ``RecursionError``.

    For hot loops that call it once per item and guard the whole loop instead (the fast
    message check of :mod:`tether._messages`); everyone else calls :func:`is_json`.
    """
    tv = type(value)
    if tv is dict:
        for key in value:
            if type(key) is not str:
                return False
        items: Any = value.values()
    elif tv is list:
        items = value
    elif tv is float:
        return _isfinite(value)
    else:
        return tv in _SCALARS
    for item in items:  # one loop for a list's items and a dict's values, one frame per level
        ti = type(item)
        if ti in _SCALARS:
            continue
        if ti is float:
            if _isfinite(item):
                continue
            return False
        if not is_json_unguarded(item):
            return False
    return True


def is_json(value: Any) -> bool:
    """True when ``value`` is made only of dict (str keys), list, str, int, finite float, bool, None.

    Exact types only (no tuples, subclasses or bytes); a structure nested too deeply for the
    interpreter (or circular) is reported as not JSON. Never raises.
    """
    try:
        return is_json_unguarded(value)
    except RecursionError:
        return False


def freeze(value: Any) -> bytes:
    """An immutable in-process image of pure-JSON ``value`` (see the module docstring)."""
    return marshal.dumps(value, _MARSHAL_VERSION)


def thaw(blob: bytes) -> Any:
    """A fresh deep copy of the value :func:`freeze` captured in ``blob``."""
    if len(blob) < _GC_PAUSE_BYTES or not _gc_isenabled():
        return marshal.loads(blob)
    _gc_disable()  # see _GC_PAUSE_BYTES
    try:
        return marshal.loads(blob)
    finally:
        _gc_enable()


def may_hold_bytes(blob: bytes) -> bool:
    """False when the frozen value certainly contains no ``$b64`` envelope (a C-speed scan)."""
    return _BYTES_MARKER in blob


def describe_non_json(value: Any, what: str) -> str:
    """An error message naming the first place in ``value`` that is not JSON."""
    found = find_non_json(value, [what])
    if found is None:
        return f"{what} is not JSON; {_ADVICE}"
    path, kind = found
    return f"{json_path(path)} is not JSON ({kind}); {_ADVICE}"


def find_non_json(value: Any, path: list[Any]) -> tuple[list[Any], str] | None:
    """Return the path and a description of the first value in ``value`` that is not JSON.

    Circular references and nesting too deep to process are reported too; never raises.
    """
    try:
        return _find(value, path, set())
    except RecursionError:
        return path, "nested too deeply"


def _find(value: Any, path: list[Any], active: set[int]) -> tuple[list[Any], str] | None:
    tv = type(value)
    if tv is str:
        return (path, "lone surrogate") if _SURROGATE.search(value) else None
    if tv in _SCALARS:
        return None
    if tv is float:
        return None if _isfinite(value) else (path, "non-finite float")
    if tv is dict or tv is list:
        if id(value) in active:
            return path, "circular reference"
        active.add(id(value))
        try:
            if tv is dict:
                for key, item in value.items():
                    if type(key) is not str:
                        return path + [key], f"non-string key {type(key).__name__}"
                    if _SURROGATE.search(key):
                        return path + [key], "lone surrogate in a key"
                    found = _find(item, path + [key], active)
                    if found:
                        return found
            else:
                for i, item in enumerate(value):
                    found = _find(item, path + [i], active)
                    if found:
                        return found
        finally:
            active.discard(id(value))
        return None
    return path, type(value).__name__


# -- deep copies as JSON -------------------------------------------------------------------
#
# Three copies, by what they accept; each returns a fresh pure-JSON value sharing nothing with
# its input (pure JSON is copied at C speed with freeze/thaw) and raises ShapeError naming the
# first bad path under ``what``:
#
# - json_copy: run data that may hold bytes; bytes become envelopes, and what json itself
#   accepts (tuples, non-string keys) is normalized the way json writes it.
# - checked_json_copy: application data that must already be pure JSON (exact types only).
# - json_roundtrip_copy: values users hand to agent state, interrupts and worker configs, which
#   have always been accepted as json accepts them; bytes are refused.


_REFUSED: Any = object()
"""What :func:`_copy_through` returns for a value its encoder refuses."""


_SURROGATE_UTF8 = re.compile(b"\xed[\xa0-\xbf]")
"""The first two bytes of a surrogate as :mod:`marshal` writes it (UTF-8 with surrogatepass);
valid UTF-8 never holds them, so a frozen value without them holds no lone surrogate."""


def _copy_through(encoder: json.JSONEncoder, value: Any) -> Any:
    """A deep copy of ``value`` as ``encoder`` writes it and JSON reads it back (pure JSON takes
    the fast path), or :data:`_REFUSED` when the encoder cannot write it or it holds a lone
    surrogate (``"\\ud800"``: a ``str`` no UTF-8 store can keep)."""
    if is_json(value):
        blob = freeze(value)
        if _SURROGATE_UTF8.search(blob) is not None and find_lone_surrogate(value, []) is not None:
            return _REFUSED
        return thaw(blob)
    try:
        text = encoder.encode(value)
    except (TypeError, ValueError, RecursionError):
        return _REFUSED
    return _REFUSED if _SURROGATE.search(text) else _decode(text)


def json_copy(value: Any, what: str | list[Any] = "value") -> Any:
    """A pure-JSON deep copy of run data that may hold bytes: ``json.loads(dumps(value))``.

    ``bytes``/``bytearray``/``memoryview`` become ``{"$b64": ...}`` envelopes (decoded back at
    the places where messages allow bytes); tuples become lists, non-string keys strings and
    ``str``/``int`` subclasses plain values, as :mod:`json` writes them. Anything else (a set,
    NaN, an object, a cycle, nesting too deep) raises :class:`~tether.errors.ShapeError`
    worded ``"<path> is not JSON (<kind>)"``, with ``what`` (a name or a path list) as the root.
    """
    copy = _copy_through(_encoder, value)
    if copy is not _REFUSED:
        return copy
    where = [what] if isinstance(what, str) else list(what)
    found = find_non_json(value, where)
    if found is None:  # find_non_json accepts it but json cannot write it (an integer too long)
        raise _not_json(where, "a value json cannot encode, e.g. an integer too large") from None
    raise _not_json(*found) from None


def checked_json_copy(value: Any, what: str) -> Any:
    """A deep copy of application data that must be pure JSON already.

    Exact types only: dict with ``str`` keys, list, ``str``, ``int``, finite ``float``,
    ``bool``, ``None`` (no tuples, bytes or subclasses). Anything else raises
    :class:`~tether.errors.ShapeError` worded ``"<path> is not JSON (<kind>); store only ..."``,
    with ``what`` as the root of the path. Used where a document is checked to be pure JSON
    throughout (snapshot and checkpoint ``app_data``).
    """
    if is_json(value):
        return thaw(freeze(value))
    raise _advised(value, what)


def json_roundtrip_copy(value: Any, what: str) -> Any:
    """What ``json.loads(json.dumps(value))`` gives, for values users hand to Tether as JSON.

    A third semantic, between the other two, kept on purpose: agent state, interrupt reasons
    and responses, worker configs and tool return values have always accepted whatever
    :func:`json.dumps` accepts (tuples become lists, non-string keys strings), so a strict
    :func:`checked_json_copy` would refuse values applications store today; and they are not
    bytes positions, so bytes are refused (a :func:`json_copy` envelope would silently turn
    them into a dict). Anything json refuses raises :class:`~tether.errors.ShapeError` worded
    ``"<path> is not JSON (<kind>); store only ..."``, with ``what`` as the root of the path.
    """
    copy = _copy_through(_plain_encoder, value)
    if copy is not _REFUSED:
        return copy
    raise _advised(value, what) from None


def _not_json(path: list[Any], kind: str, advice: str = "") -> ShapeError:
    return ShapeError(path, f"is not JSON ({kind})", message=f"{json_path(path)} is not JSON ({kind}){advice}")


def _advised(value: Any, what: str) -> ShapeError:
    """The error for ``value`` that is not pure JSON, naming its first bad path (see describe_non_json)."""
    surrogate = find_lone_surrogate(value, [what])  # None when circular or too deep: find_non_json names it
    if surrogate is not None:
        return _not_json(surrogate, "lone surrogate", advice=f"; {_ADVICE}")
    found = find_non_json(value, [what])
    if found is None:
        return ShapeError([what], "is not JSON", message=describe_non_json(value, what))
    return _not_json(*found, advice=f"; {_ADVICE}")


def is_envelope(value: Any) -> bool:
    """True for ``{"$b64": <str>}`` (the content is not checked)."""
    return type(value) is dict and len(value) == 1 and type(value.get(BYTES_KEY)) is str


def decode_base64(text: str) -> bytes:
    """Decode canonical base64 (padded, no whitespace); ``ValueError`` otherwise.

    Canonical means re-encoding gives the same text, so a decoded envelope always encodes back
    to exactly what was loaded.
    """
    try:
        raw = binascii.a2b_base64(text.encode("ascii"), strict_mode=True)
    except (binascii.Error, UnicodeEncodeError):
        raise ValueError(f"invalid base64 in a {BYTES_KEY!r} envelope") from None
    if base64.b64encode(raw).decode("ascii") != text:
        raise ValueError(f"non-canonical base64 in a {BYTES_KEY!r} envelope") from None
    return raw


def decode_bytes(value: Any) -> bytes | None:
    """Decode a bytes envelope (or pass bytes through); ``None`` if it is neither.

    An envelope whose base64 is invalid raises ``ValueError`` (never a silent ``None``).
    """
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if is_envelope(value):
        return decode_base64(value[BYTES_KEY])
    return None
