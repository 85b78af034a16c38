"""`PayloadPolicy`: where a run's large values go and how large one value may be.

Every part of Tether on Temporal that turns run values into payloads (the client, the worker's
activities, the snapshot converters) needs the same three things: the :class:`BlobStore` that
large values go to, ``inline_limit`` (values whose canonical JSON is larger travel as
``{"$blob": ref}`` references) and ``max_value_bytes`` (the hard limit of one value: a larger
one raises :class:`~tether.errors.PayloadTooLargeError` naming it). This object holds them
once, and offers the claim-check operations over them.

The public constructors (:class:`~tether.temporal.TetherClient`,
:func:`~tether.temporal.create_worker`, :class:`~tether.temporal.TetherPlugin`, the activity
sets) take either a ``PayloadPolicy`` or a ``BlobStore`` with the ``inline_limit`` /
``max_value_bytes`` keywords (their original spelling): :meth:`PayloadPolicy.of` reads both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypedDict

from .blobs import BlobStore
from .claimcheck import DEFAULT_INLINE_LIMIT, compact_message, compact_result
from .payloads import DEFAULT_MAX_VALUE_BYTES, compact_interrupt, compact_state, offload
from .shapes import CompactMessage, CompactRecord, CompactResult, CompactState


class PayloadLimits(TypedDict, total=False):
    """The two limits as keyword arguments (``**limits``) of the constructors that also take a
    bare ``BlobStore``."""

    inline_limit: int
    max_value_bytes: int | None


@dataclass(frozen=True)
class PayloadPolicy:
    """The blob store and the two size limits of a run's payloads."""

    blobs: BlobStore
    """Where values larger than ``inline_limit`` go (shared by every worker and client of the runs)."""
    inline_limit: int = DEFAULT_INLINE_LIMIT
    """Values larger than this (bytes of canonical JSON) travel as blob references."""
    max_value_bytes: int | None = DEFAULT_MAX_VALUE_BYTES
    """The hard limit of one value (None: no limit)."""

    @classmethod
    def of(
        cls,
        blobs: BlobStore | PayloadPolicy,
        inline_limit: int = DEFAULT_INLINE_LIMIT,
        max_value_bytes: int | None = DEFAULT_MAX_VALUE_BYTES,
    ) -> PayloadPolicy:
        """``blobs`` itself when it is a policy, else the policy of ``blobs`` and the two limits."""
        return blobs if isinstance(blobs, PayloadPolicy) else cls(blobs, inline_limit, max_value_bytes)

    def offload(self, value: Any, field: str) -> Any:
        """``value``, or its ``{"$blob": ref}`` placeholder when it is large (one blob: nobody
        reads its inside before it is restored)."""
        return offload(self.blobs, value, field, limit=self.inline_limit, hard_limit=self.max_value_bytes)

    def compact_message(self, message: Any, field: str = "message") -> CompactMessage:
        """A compact copy of ``message`` (:func:`~tether.temporal.claimcheck.compact_message`)."""
        return compact_message(self.blobs, message, self.inline_limit, self.max_value_bytes, field)

    def compact_result(self, result: Any) -> CompactResult:
        """A compact copy of a tool result (:func:`~tether.temporal.claimcheck.compact_result`)."""
        return compact_result(self.blobs, result, self.inline_limit, self.max_value_bytes)

    def compact_interrupt(self, record: Any) -> CompactRecord:
        """An interrupt record with its reason and response offloaded when large."""
        return compact_interrupt(self.blobs, record, limit=self.inline_limit, hard_limit=self.max_value_bytes)

    def compact_state(
        self, state: dict[str, Any], field: str = "state", previous: CompactState | None = None, *, owned: bool = False
    ) -> CompactState:
        """The agent state with each large value offloaded (keys stay inline: the workflow merges
        tool calls' changes key by key).

        Args:
            state: The agent state, or the values of it that changed.
            field: The state's name in errors.
            previous: The compact state these values replace: a large object or array is
                stored as a patch against its previous version
                (:func:`~tether.temporal.payloads.offload_state_value`).
            owned: ``state``'s values are the caller's own copies, never used again: pure-JSON
                ones are kept as cached versions without a copy.
        """
        return compact_state(
            self.blobs, state, field, limit=self.inline_limit, hard_limit=self.max_value_bytes, previous=previous, owned=owned
        )


__all__ = ["PayloadLimits", "PayloadPolicy"]
