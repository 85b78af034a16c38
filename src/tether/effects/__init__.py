"""Effect contracts for tools with real side effects.

Tether re-runs a tool call that a crash left *in doubt* (started, no result recorded) with the
same idempotency key, ``ToolContext.idempotency_key``. This package makes that key do its work:

- **HTTP**: ``context.http`` (the invocation's shared ``httpx.AsyncClient``) and
  :func:`http_client` / :func:`sync_http_client` send the key as the ``Idempotency-Key`` header
  of a tool call's ``POST`` and ``PATCH`` requests, so the API deduplicates the re-run.
- **PostgreSQL outbox**: on a run stored in a :class:`~tether.durable.postgres.PostgresStore`, a
  tool declared ``@tool(transactional=True)`` writes its effect with
  ``async with context.transaction() as conn:`` (a psycopg connection): the effect commits in
  the same transaction as the store write that records the call's result, so both happen or
  neither does: exactly once, with no reconcile. In-doubt handling re-runs such a call, since an
  unrecorded result means its effect was rolled back too.

See the "Side effects" guide.
"""

from ..errors import TransactionUnavailableError
from .http import IDEMPOTENCY_HEADER, KEYED_METHODS, current_key, http_client, sync_http_client
from .scope import CallTransaction, EffectScope

__all__ = [
    "IDEMPOTENCY_HEADER",
    "KEYED_METHODS",
    "CallTransaction",
    "EffectScope",
    "TransactionUnavailableError",
    "current_key",
    "http_client",
    "sync_http_client",
]
