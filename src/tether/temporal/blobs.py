"""`BlobStore`: content-addressed JSON blobs shared by the workers and clients of one machine.

The claim-check pattern keeps conversation content out of Temporal's history: activities and
workflow state carry short references (``sha256:<hex>``, the SHA-256 of the value's canonical
JSON) and the content lives here. A blob is immutable, so a reference always means the same
value, which keeps workflow replay deterministic; writing the same value twice is a no-op.

The store is a directory (``<root>/<2 hex>/<62 hex>.json``); writes go to a temporary file
and are renamed into place, so a reader never sees a partial blob and a killed writer leaves
nothing behind but a stray temporary file. Reads verify the hash, so a damaged file is
reported instead of being fed to a model.

A store also remembers the last few values built from its blobs (:meth:`BlobStore.remember`,
:meth:`BlobStore.recall`): a state value stored as a patch against its previous version (see
:mod:`tether.temporal.versions`) is read by applying one patch to the version read a cycle ago,
not by replaying its chain. What a reference stands for never changes, so this memory is never
stale; it is per process and bounded.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from .._json import json_copy
from ..errors import StoreError

REF_PREFIX = "sha256:"
_REF = re.compile(r"sha256:[0-9a-f]{64}")


def canonical_json(value: Any) -> bytes:
    """Canonical UTF-8 JSON of ``value`` (sorted keys, no spaces, bytes as base64 envelopes)."""
    return json.dumps(json_copy(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()


def ref_of(value: Any) -> str:
    """The reference a value gets in any :class:`BlobStore` (pure: no I/O).

    Args:
        value: A JSON value; its reference is the SHA-256 of its canonical JSON.
    """
    return REF_PREFIX + hashlib.sha256(canonical_json(value)).hexdigest()


def is_ref(value: Any) -> bool:
    """True when ``value`` is a well-formed blob reference."""
    return isinstance(value, str) and _REF.fullmatch(value) is not None


class BlobStore:
    """Content-addressed JSON values in a directory shared by processes on this machine.

    Args:
        root: The directory (created when missing); every worker and client of the runs
            must see the same one.
        memory: How many values built from blobs this object remembers (see :meth:`remember`).
    """

    def __init__(self, root: str | os.PathLike[str], *, memory: int = 16) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.bytes_written = 0
        """Bytes of blobs this object wrote (blobs already present are not counted)."""
        self.blobs_written = 0
        """Blobs this object wrote."""
        self._memory: OrderedDict[str, Any] = OrderedDict()
        self._memory_size = memory
        self._memory_lock = threading.Lock()  # activities may read and write from several threads

    def _path(self, ref: str) -> Path:
        if not is_ref(ref):
            raise StoreError(f"blob reference {ref!r:.80} is malformed; expected 'sha256:' and 64 hex digits")
        digest = ref[len(REF_PREFIX) :]
        return self.root / digest[:2] / f"{digest[2:]}.json"

    def put(self, value: Any) -> str:
        """Store ``value`` (JSON; bytes become envelopes) and return its reference."""
        data = canonical_json(value)
        return self.put_bytes(data)

    def put_bytes(self, data: bytes) -> str:
        """Store canonical JSON text already serialized by :func:`canonical_json`."""
        ref = REF_PREFIX + hashlib.sha256(data).hexdigest()
        path = self._path(ref)
        if path.exists():
            return ref
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self.bytes_written += len(data)
        self.blobs_written += 1
        return ref

    def get(self, ref: str) -> Any:
        """The value stored under ``ref`` (a fresh copy; bytes stay as envelopes)."""
        path = self._path(ref)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise StoreError(
                f"blob {ref} is missing from {self.root}; every worker and client of a run must share the same blob directory"
            ) from None
        if REF_PREFIX + hashlib.sha256(data).hexdigest() != ref:
            raise StoreError(f"blob {ref} in {self.root} is damaged (its content does not match its hash)")
        return json.loads(data)

    def has(self, ref: str) -> bool:
        """Whether ``ref`` is stored."""
        return self._path(ref).exists()

    def remember(self, ref: str, built: Any) -> None:
        """Keep ``built``, what the blob ``ref`` stands for once read and interpreted, for
        :meth:`recall` (the least recently used is forgotten past ``memory`` entries).

        Args:
            ref: The blob's reference.
            built: The value (shared with every later :meth:`recall`: nobody may change it).
        """
        with self._memory_lock:
            self._memory[ref] = built
            self._memory.move_to_end(ref)
            while len(self._memory) > self._memory_size:
                self._memory.popitem(last=False)

    def recall(self, ref: str) -> Any:
        """What :meth:`remember` kept for ``ref`` (None when nothing is kept).

        Args:
            ref: The blob's reference.
        """
        with self._memory_lock:
            built = self._memory.get(ref)
            if built is not None:
                self._memory.move_to_end(ref)
            return built


__all__ = ["REF_PREFIX", "BlobStore", "canonical_json", "is_ref", "ref_of"]
