"""How a durable run's head is stored small: large values as blobs, step heads as deltas.

A head (see :mod:`tether.durable.head`) is replaced at every save point and, until schema 3,
was copied whole into every step row; a sizeable agent state was therefore written at every
save point and kept once per step. Stored heads are now *packed*:

- **Large values are blobs.** A head field in :data:`BLOB_FIELDS` whose JSON text is at least
  :data:`BLOB_MIN` characters is stored once as a blob row (content-addressed: its id is a
  digest of its text, so an unchanged value is never written again, and a reader checks the
  digest) and the head holds a reference, ``{"$blob": id}``. A value that changes a little
  refers to the blob it was last stored as plus a :func:`diff` against it,
  ``{"$blob": id, "$patch": {...}}``, so a step costs the size of the change; once the patch
  grows past a quarter of the value (:data:`REBASE_FRACTION`) the value is stored afresh.
- **Heads can be deltas.** A store that supports it (PostgreSQL) keeps a run's head as a *base*
  (a whole packed head, rewritten rarely) plus the :func:`diff` of the current head against it,
  so a save point rewrites a few hundred bytes, not the whole head; once that delta grows past
  the head itself (:data:`HEAD_DELTA_FRACTION`), the head is written whole and becomes the new base
  (:meth:`HeadPacker.head_delta`).
- **Step heads are deltas.** A step row holds a full (packed) head only every
  :data:`KEYFRAME_EVERY` steps and at the first step a session writes (a *keyframe*); the others
  hold ``"delta"``, the :func:`diff` of the packed head against the previous step's. A reader
  rebuilds a step's head from the nearest keyframe at or before it: bounded work.

Every patch rebuilds exactly the text of the value it stands for (so ``1`` never becomes
``1.0`` or ``true``, and key order is kept). A head is encoded member by member (and its small
object members member by member too), so head and step deltas are made by comparing member
texts (:func:`member_patch`): exact by construction, with no diff and nothing encoded twice. A
blob's patch (:func:`checked_patch`) is checked when it is made, else the value is stored
whole. Packing is the writer's business (:class:`HeadPacker`, owned
by a :class:`~tether.durable.session.DurableSession`); unpacking is the row codec's
(:mod:`tether.durable.codec`). A head written without a packer (a direct ``store.write``) is
stored whole, and step rows of older stores carry whole heads: both are read as keyframes.

Patch format (JSON): an object mapping a key to ``[value]`` (set it), ``[]`` (delete it) or a
nested patch object (patch the object under that key); :func:`diff`, :func:`apply` and
:func:`checked_patch` live in :mod:`tether._jsonpatch`, shared with Temporal's versioned state
values (:mod:`tether.temporal.versions`).
"""

from __future__ import annotations

import copy
import hashlib
import hmac
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from .._json import MEMBER_KEY_TEXTS, join_members, member_key_text, member_texts, members_and_text
from .._json import dumps_compact as dumps
from .._json import parse_json as _parse
from .._jsonpatch import apply, checked_patch, diff

BLOB_FIELDS = ("state", "conversation_manager_state", "interrupt_state", "model_state", "system_prompt", "manifest")
"""Head fields stored as blobs when large (the others are small and change at every step)."""
BLOB_MIN = 1024
"""Characters of JSON text from which a head field is stored as a blob."""
REBASE_FRACTION = 4
"""A value is stored afresh when its patch's text exceeds 1/REBASE_FRACTION of the value's."""
KEYFRAME_EVERY = 32
"""A step row holds a whole head at least this often (reading a step replays at most this many
deltas); measured with ``bench/durable.py``: 16 → 64 changes the bytes per step by under 3%."""
HEAD_DELTA_FRACTION = 1
"""A head is written whole (a new base) when its delta's text exceeds 1/HEAD_DELTA_FRACTION of it.
Measured with ``bench/durable.py`` on PostgreSQL: the fields a cycle changes (cursor, metrics,
counters, times) make a delta of about half the head, so a delta capped at half the head is
rewritten whole every few writes (1,438 WAL bytes per cycle for the head); capped at the whole
head, about 960."""
BLOB_REF = "$blob"
PATCH = "$patch"


def is_ref(value: Any) -> bool:
    """True when a stored head field is a blob reference (``{"$blob": id[, "$patch": p]}``)."""
    return type(value) is dict and BLOB_REF in value and len(value) <= 2 and (len(value) == 1 or PATCH in value)


def is_result_ref(value: Any) -> bool:
    """True for a tool result stored as a blob: ``{"$blob": id}`` with a string id (a real tool
    result always has ``toolUseId``, ``status`` and ``content``, so the two never mix)."""
    return type(value) is dict and len(value) == 1 and type(value.get(BLOB_REF)) is str


def blob_id(text: str, mac_key: bytes | None = None) -> str:
    """The content address of a blob's text: ``sha256:<hex>``, or with a store cipher a keyed
    digest ``hmac:<hex>`` (a plain digest of encrypted data would let a reader confirm guesses)."""
    if mac_key is None:
        return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return "hmac:" + hmac.new(mac_key, text.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()


@dataclass(slots=True)
class _Base:
    """The blob a head field was last stored as: its id, text and parsed value."""

    ident: str
    text: str
    value: Any


class _Members:
    """A stored head remembered by its members' texts (what a later head is compared with):
    ``texts`` by key, and ``subs``, the member texts of its small object members. A member's
    value is parsed from its text only when asked for (a frozen copy: the live head changes)."""

    __slots__ = ("_values", "figures", "subs", "texts")

    def __init__(self, texts: dict[str, str], subs: dict[str, dict[str, str]], figures: Any = None) -> None:
        self.texts = texts
        self.subs = subs
        self.figures = figures  # what the step's writer noted of it (see HeadPacker.step_record)
        self._values: dict[str, Any] = {}

    def value(self, key: str) -> Any:
        """The value of member ``key`` as stored (parsed once)."""
        try:
            return self._values[key]
        except KeyError:
            value = self._values[key] = _parse(self.texts[key])
            return value


@dataclass
class PackedHead:
    """A head as stored: its text, the packed object, the text of each of its members and of
    the members of its small object members (``text`` is made of them, see
    :func:`~tether._json.member_texts`), and the blob rows the write must add."""

    text: str
    packed: dict[str, Any]
    members: dict[str, str]
    subs: dict[str, dict[str, str]]
    blobs: list[tuple[str, str]] = field(default_factory=list)


def member_patch(base: _Members, new: PackedHead, changed: dict[str, str] | None = None) -> tuple[dict[str, Any], str] | None:
    """The patch from the stored head ``base`` to ``new``, and its text; None when the members'
    order does not allow one (a patch keeps the base's order and appends what it adds).

    Members are compared by their texts, so the patch is exact by construction (no diff, no
    check, nothing encoded again): an equal text is the same member, an object member that
    both heads wrote member by member is patched by its members' texts the same way, anything
    else that changed is set whole. The patched head encodes to exactly ``new.text``, and the
    patch's text is exactly :func:`~tether._json.dumps_compact` of the patch.

    Args:
        base: The head the patch applies to.
        new: The head to reach.
        changed: Member texts standing in for ``base``'s (a prediction of the new head, see
            :func:`predicted`): compared with, never patched member by member.
    """
    old = base.texts if changed is None else {**base.texts, **changed}
    patch: dict[str, Any] = {}
    text = _text_patch(old, new.members, new.packed, base.subs, new.subs, changed or _NO_CHANGES, patch)
    return None if text is None else (patch, text)


def member_patch_text(base: _Members, new: PackedHead) -> str | None:
    """The text of :func:`member_patch` ``(base, new)`` alone (None when there is no patch): a
    head delta is stored as text, so the patch object is not built."""
    return _text_patch(base.texts, new.members, _NO_VALUES, base.subs, new.subs, _NO_CHANGES, None)


_NO_SUBS: dict[str, dict[str, str]] = {}
_NO_CHANGES: dict[str, str] = {}
_NO_VALUES: dict[str, Any] = {}


def _text_patch(
    old: dict[str, str],
    texts: dict[str, str],
    values: dict[str, Any],
    old_subs: dict[str, dict[str, str]],
    subs: dict[str, dict[str, str]],
    changed: dict[str, str],
    patch: dict[str, Any] | None,
) -> str | None:
    """The text of the patch from member texts ``old`` to ``texts`` (see :func:`member_patch`),
    the patch itself put into ``patch`` (None: the text alone, ``values`` unused); None when the
    members' order does not allow one."""
    same_keys = list(texts) == list(old)
    if not same_keys:
        common = [key for key in texts if key in old]
        if common != [key for key in old if key in texts] or list(texts)[: len(common)] != common:
            return None
    parts: list[str] = []
    before = old.get
    key_texts = MEMBER_KEY_TEXTS  # member_key_text inlined: a call per changed member measured ~2 µs a write
    for key, text in texts.items():
        if before(key) == text:
            continue
        key_text = key_texts.get(key) or member_key_text(key)
        inner = subs.get(key) if subs else None
        if inner is not None and key not in changed:
            outer = old_subs.get(key)
            if outer is not None:
                sub: dict[str, Any] | None = None if patch is None else {}
                made = _text_patch(outer, inner, _NO_VALUES if sub is None else values[key], _NO_SUBS, _NO_SUBS, _NO_CHANGES, sub)
                if made is not None:
                    if patch is not None:
                        patch[key] = sub
                    parts.append(key_text + made)
                    continue
        if patch is not None:
            patch[key] = [values[key]]
        parts.append(f"{key_text}[{text}]")
    if not same_keys:
        for key in old:
            if key not in texts:
                if patch is not None:
                    patch[key] = []
                parts.append(member_key_text(key) + "[]")
    return "{" + ",".join(parts) + "}"


class HeadPacker:
    """The packing memory of one durable session: the blob each large field was last stored
    as, and the previous step's packed head (the base of the next step's delta).

    A fresh packer (a new session, after a resume) knows nothing: its first write stores each
    large field's blob again (a no-op for a store that has it: blobs are content-addressed) and
    its first step is a keyframe.
    """

    def __init__(self, mac_key: bytes | None = None, *, keyframe_every: int = KEYFRAME_EVERY) -> None:
        self.mac_key = mac_key
        self.keyframe_every = keyframe_every
        self._bases: dict[str, _Base] = {}
        self._stored: set[str] = set()  # blob ids this packer has handed to a write
        self._step_head: _Members | None = None
        self._since_keyframe = 0
        self._head_base: tuple[int, _Members] | None = None  # (revision, head) a store holds as the base of deltas
        self._manifest: tuple[Any, str, str] | None = None  # (a copy of the manifest, its blob id, its text)

    def pack(self, head: dict[str, Any]) -> PackedHead:
        """The stored form of ``head`` (already stripped of redacted keys).

        Each member is encoded once (:func:`member_texts`); the head's text is made of them.
        The run's manifest (:mod:`tether.manifest`: a few hundred characters, the same at every
        save point of a session) is always a blob, written once: inline it made every head
        rewrite that much longer (on SQLite's 1 KiB pages, it pushed a tool loop's head past a
        page, and every save point wrote an overflow page too)."""
        blobs: list[tuple[str, str]] = []
        manifest = head.get("manifest")
        shared = bool(manifest) and not is_ref(manifest)
        if shared:
            head = {**head, "manifest": self._manifest_ref(manifest, blobs)}
        subs: dict[str, dict[str, str]] = {}
        texts, text = members_and_text(head, subs)
        packed = head
        for name in BLOB_FIELDS:
            if shared and name == "manifest":
                continue
            value = head.get(name)
            if not value:
                self._bases.pop(name, None)
                continue
            field_text = texts[name]
            if len(field_text) < BLOB_MIN and not is_ref(value):  # a small value shaped like a reference is a blob too
                self._bases.pop(name, None)
                continue
            if packed is head:
                packed = dict(head)
            ref = packed[name] = self._ref(name, value, field_text, blobs)
            texts[name] = dumps(ref)
            subs.pop(name, None)
        return PackedHead(text if packed is head else join_members(texts), packed, texts, subs, blobs)

    def _manifest_ref(self, manifest: Any, blobs: list[tuple[str, str]]) -> dict[str, Any]:
        """The blob reference of the run's manifest; its blob row joins ``blobs`` the first
        time this packer stores it (encoded and hashed once while the manifest stays equal)."""
        cached = self._manifest
        if cached is None or cached[0] != manifest:
            text = dumps(manifest)
            cached = self._manifest = (copy.deepcopy(manifest), blob_id(text, self.mac_key), text)
        ident = cached[1]
        if ident not in self._stored:
            self._stored.add(ident)
            blobs.append((ident, cached[2]))
        return {BLOB_REF: ident}

    def _ref(self, name: str, value: Any, text: str, blobs: list[tuple[str, str]]) -> dict[str, Any]:
        base = self._bases.get(name)
        if base is not None:
            patch = checked_patch(base.value, base.text, value, text)
            if patch is not None and (not patch or len(dumps(patch)) * REBASE_FRACTION <= len(text)):
                return {BLOB_REF: base.ident, PATCH: patch} if patch else {BLOB_REF: base.ident}
        ident = self.blob(text, blobs)
        self._bases[name] = _Base(ident, text, _parse(text))
        return {BLOB_REF: ident}

    def blob(self, text: str, blobs: list[tuple[str, str]]) -> str:
        """The id of the blob of ``text``, adding its row to ``blobs`` unless this packer
        already handed it to a write (a tool result stored in its results row and then in its
        message is one blob row)."""
        ident = blob_id(text, self.mac_key)
        if ident not in self._stored:
            self._stored.add(ident)
            blobs.append((ident, text))
        return ident

    def head_delta(self, packed: PackedHead, rev: int) -> tuple[str, int] | None:
        """How a store keeping head deltas writes head ``packed`` at revision ``rev``: ``(patch
        text, base revision)``, the patch against the head this packer last had written whole;
        or None: write it whole (it becomes the base). Called once per write, in order."""
        base = self._head_base
        if base is not None and base[0] < rev:
            text = member_patch_text(base[1], packed)
            if text is not None and len(text) * HEAD_DELTA_FRACTION <= len(packed.text):
                return text, base[0]
        self._head_base = (rev, _Members(packed.members, packed.subs))
        return None

    def forget_head_base(self) -> None:
        """The store did not keep the base this packer knows: the next head is written whole."""
        self._head_base = None

    @property
    def previous_step_head(self) -> Mapping[str, Any] | None:
        """The packed head of the last step this packer recorded (None before the first), its
        members parsed as they are read."""
        return None if self._step_head is None else _LazyHead(self._step_head)

    def step_head(self, packed: PackedHead, number: int, created_at: Any) -> tuple[str, dict[str, Any]]:
        """How step ``number`` (stamped ``created_at``) records ``packed``: ``("head", packed)``
        (a keyframe) or ``("delta", patch)`` against :func:`predicted` from the previous step's."""
        kind, value, _ = self.step_record(packed, number, created_at)
        return kind, value

    @property
    def previous_step_figures(self) -> Any:
        """What the writer of the last step this packer recorded noted of its head
        (``figures`` of :meth:`step_record`; None before the first or when none was noted)."""
        return None if self._step_head is None else self._step_head.figures

    def step_record(self, packed: PackedHead, number: int, created_at: Any, figures: Any = None) -> tuple[str, dict[str, Any], str]:
        """:meth:`step_head` and the JSON text of its value (exactly :func:`dumps_compact` of
        it: the head's text, or the patch's), which a step row is written with. ``figures``: a
        value the writer derives from ``packed`` now and wants back at the next step
        (:attr:`previous_step_figures`) without parsing the remembered head."""
        previous = self._step_head
        self._step_head = _Members(packed.members, packed.subs, figures)
        if previous is not None and self._since_keyframe + 1 < self.keyframe_every:
            made = member_patch(previous, packed, _predicted_members(previous.texts, number, created_at))
            if made is not None:
                self._since_keyframe += 1
                return "delta", made[0], made[1]
        self._since_keyframe = 0
        return "head", packed.packed, packed.text


class _LazyHead(Mapping[str, Any]):
    """A remembered head as a read-only mapping whose members are parsed when read."""

    __slots__ = ("_members",)

    def __init__(self, members: _Members) -> None:
        self._members = members

    def __getitem__(self, key: str) -> Any:
        if key not in self._members.texts:
            raise KeyError(key)
        return self._members.value(key)

    def __iter__(self) -> Iterator[str]:
        return iter(self._members.texts)

    def __len__(self) -> int:
        return len(self._members.texts)


def _predicted_members(previous: dict[str, str], number: int, created_at: Any) -> dict[str, str]:
    """The member texts :func:`predicted` changes in a previous step's head."""
    changed: dict[str, Any] = {}
    if "steps" in previous:
        changed["steps"] = number
    if "updated_at" in previous:
        changed["updated_at"] = created_at
    return member_texts(changed)


def predicted(previous: dict[str, Any], number: int, created_at: Any) -> dict[str, Any]:
    """What step ``number``'s packed head is expected to be, from the previous step's: the same,
    with ``steps`` counting this step and ``updated_at`` its time (a delta records the rest)."""
    base = dict(previous)
    if "steps" in base:
        base["steps"] = number
    if "updated_at" in base:
        base["updated_at"] = created_at
    return base


def unpack_value(ref: dict[str, Any], blobs: dict[str, Any]) -> Any:
    """The value a blob reference stands for, from the parsed blobs by id (``KeyError`` when
    missing, ``ValueError`` when the patch does not fit)."""
    base = blobs[ref[BLOB_REF]]
    patch = ref.get(PATCH)
    return base if not patch else apply(base, patch)


def refs_of(head: dict[str, Any]) -> set[str]:
    """The blob ids a packed head refers to."""
    ids: set[str] = set()
    for name in BLOB_FIELDS:
        value: Any = head.get(name)
        if is_ref(value) and type(value[BLOB_REF]) is str:
            ids.add(value[BLOB_REF])
    return ids


def unpack_head(head: dict[str, Any], blobs: dict[str, Any]) -> dict[str, Any]:
    """``head`` with every blob reference replaced by its value (``head`` itself when it has none)."""
    out = head
    for name in BLOB_FIELDS:
        value: Any = head.get(name)
        if is_ref(value):
            if out is head:
                out = dict(head)
            out[name] = unpack_value(value, blobs)
    return out


__all__ = [
    "BLOB_FIELDS",
    "BLOB_MIN",
    "HEAD_DELTA_FRACTION",
    "KEYFRAME_EVERY",
    "HeadPacker",
    "PackedHead",
    "apply",
    "blob_id",
    "checked_patch",
    "diff",
    "is_ref",
    "predicted",
    "refs_of",
    "unpack_head",
    "unpack_value",
]
