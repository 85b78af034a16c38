"""Answers to interrupts: one set of rules, however the answers arrive.

An answer is an ``interruptResponse`` body, ``{"interruptId": ..., "response": ...}`` (in a
prompt, each wrapped as ``{"interruptResponse": body}``). The agent's turn, a durable run's
in-doubt questions, a graph's or swarm's interrupted nodes (local and on Temporal), the server's
``/runs/{id}/interrupts`` (and, through their thin parsers, AG-UI ``resume`` entries and tool
messages and A2A message parts) and the CLI's ``--answer ID=VALUE`` all check answers here,
before anything changes:

- :func:`answers_from` reads the common form: a list of bodies or of ``interruptResponse``
  blocks, or an object ``{interrupt id: response}``. Each answer is an object with a string
  ``interruptId`` and a ``response``, and no other key; the response is JSON (copied).
- :func:`check_answers` checks answers against a run's interrupts (id -> record, with a
  ``response`` once answered): an unknown id, an interrupt answered earlier or twice in the list,
  and an in-doubt question (:data:`IN_DOUBT`) answered with anything but :data:`RERUN`, a string
  or an object (the result to record) are refused; with ``every``, so is a list that leaves a
  pending interrupt unanswered (the server's rule: a resume over HTTP answers them all).
- :func:`route_answers` is the same for runs whose interrupts belong to several owners (a graph's
  nodes, a swarm's waiting member): each answer goes to the owner waiting on it, and every
  owner's share is checked before any owner resumes.
- :func:`allow_names` checks the names of incompatible differences a resume accepts.

Every refusal is an :class:`~tether.errors.InterruptError` (a
:class:`~tether.errors.PromptError`) naming the answer (``where``: ``"prompt[0].interruptResponse"``,
``"responses[2]"``) and what is wrong; an edge maps it to its own error (the server: a 400).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any, Final

from ._json import json_roundtrip_copy
from .errors import ConfigurationError, InterruptError, ShapeError, TetherError

RERUN: Final = "rerun"
"""The answer to an in-doubt question that runs the call again."""
IN_DOUBT: Final = "tether.in_doubt"
"""The name of the interrupt a durable run raises for a non-idempotent call left in doubt."""

KEYS: Final = frozenset({"interruptId", "response"})


def answer_block(ident: str, response: Any) -> dict[str, Any]:
    """The ``interruptResponse`` block answering interrupt ``ident`` with ``response``."""
    return {"interruptResponse": {"interruptId": ident, "response": response}}


def as_blocks(answers: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Answer bodies as ``interruptResponse`` blocks (a prompt)."""
    return [answer_block(answer["interruptId"], answer["response"]) for answer in answers]


def bodies_of(items: Iterable[Any]) -> list[Any]:
    """``items`` with every ``interruptResponse`` block unwrapped to its body (others as they are)."""
    return [item["interruptResponse"] if isinstance(item, dict) and "interruptResponse" in item else item for item in items]


def answer_list(task: Any) -> list[dict[str, Any]] | None:
    """A copy of ``task`` if it is a non-empty list of ``interruptResponse`` blocks (answers, not
    a task), else None. The answers themselves are checked by whoever takes them."""
    if isinstance(task, list) and task and all(isinstance(b, dict) and isinstance(b.get("interruptResponse"), dict) for b in task):
        return copy.deepcopy(task)
    return None


def answers_from(responses: Any, where: str = "responses[{i}]", what: str = "answers") -> list[dict[str, Any]]:
    """``responses`` in the common form, each answer's shape checked (module docstring).

    Args:
        responses: A list of bodies or ``interruptResponse`` blocks, or ``{interrupt id: response}``.
        where: How a message names answer ``i`` (``"prompt[{i}].interruptResponse"``).
        what: How a message names ``responses`` itself.

    Raises:
        InterruptError: Not a list or an object; an answer that is not an object, whose
            ``interruptId`` is not a non-empty string, with no ``response``, with another key, or
            whose response is not JSON.
    """
    if isinstance(responses, Mapping):
        items: list[Any] = [{"interruptId": key, "response": value} for key, value in responses.items()]
    elif isinstance(responses, list | tuple):
        items = bodies_of(responses)
    else:
        raise InterruptError(f"{what} must be a list of {{interruptId, response}} or an object of answers, got {type(responses).__name__}")
    answers: list[dict[str, Any]] = []
    for i, item in enumerate(items):
        at = where.format(i=i)
        if not isinstance(item, dict):
            raise InterruptError(f"{at} must be an object {{interruptId, response}}, got {type(item).__name__}")
        ident = item.get("interruptId")
        if not isinstance(ident, str) or not ident:
            raise InterruptError(f"{at}.interruptId must be a string, got {ident!r}")
        if "response" not in item:
            raise InterruptError(f"{at}.response is missing: the answer to interrupt {ident!r} has no response")
        extra = set(item) - KEYS
        if extra:
            raise InterruptError(f"{at}.{sorted(extra)[0]} is not an interruptResponse key (use interruptId and response)")
        answers.append({"interruptId": ident, "response": json_value(item["response"], f"{at}.response")})
    return answers


def check_answers(
    answers: list[dict[str, Any]], interrupts: Mapping[str, Mapping[str, Any]], *, every: bool = False, where: str = "responses[{i}]"
) -> None:
    """Check ``answers`` (the common form, :func:`answers_from`) against a run's interrupts.

    Args:
        answers: The answer bodies.
        interrupts: The run's interrupts by id (records: ``name``, and ``response`` once answered).
        every: Refuse answers that leave a pending interrupt unanswered.
        where: How a message names answer ``i``.

    Raises:
        InterruptError: An unknown id; an interrupt answered earlier or twice in ``answers``; an
            in-doubt question answered with neither ``"rerun"``, a string nor an object; with
            ``every``, a pending interrupt left unanswered.
    """
    pending = [ident for ident, record in interrupts.items() if "response" not in record]
    seen: set[str] = set()
    for i, answer in enumerate(answers):
        at = where.format(i=i)
        ident = answer["interruptId"]
        record = interrupts.get(ident)
        if record is None:
            raise InterruptError(f"{at}.interruptId: unknown interrupt id {ident!r}; pending interrupts: {', '.join(pending) or 'none'}")
        if ident in seen or "response" in record:
            twice = " (answered twice in one list)" if ident in seen else ""
            raise InterruptError(f"{at}.interruptId: interrupt {ident!r} ({record.get('name')}) is already answered{twice}")
        response = answer["response"]
        if record.get("name") == IN_DOUBT and not isinstance(response, dict | str):
            raise InterruptError(
                f"{at}.response: in-doubt call {ident!r} takes {RERUN!r} or the result to record "
                f"(a string or an object), got {response!r:.80}"
            )
        seen.add(ident)
    missing = [ident for ident in pending if ident not in seen]
    if every and missing:
        raise InterruptError(f"answers are missing: the run waits for answers to {missing}; answer every pending interrupt")


def route_answers(
    answers: list[dict[str, Any]], waiting: Mapping[str, Iterable[Mapping[str, Any]]], who: str, where: str = "responses[{i}]"
) -> dict[str, list[dict[str, Any]]]:
    """The answers of each owner (a graph's node, a swarm's member) of a run's interrupts, all
    checked (:func:`check_answers`) before any owner resumes with its share.

    Args:
        answers: The answer bodies (:func:`answers_from`).
        waiting: Each owner's pending interrupts (records with ``id`` and ``name``).
        who: The owners, for messages: ``"node of this graph"``.
        where: How a message names answer ``i``.

    Raises:
        InterruptError: An answer no owner waits on, or one :func:`check_answers` refuses.
    """
    owners = {record["id"]: owner for owner, records in waiting.items() for record in records}
    routed: dict[str, list[dict[str, Any]]] = {}
    for i, answer in enumerate(answers):
        ident = answer["interruptId"]
        if ident not in owners:
            raise InterruptError(
                f"{where.format(i=i)}.interruptId: unknown interrupt id {ident!r}: "
                f"no interrupted {who} waits on interrupt {ident!r} (waiting: {', '.join(sorted(owners)) or 'none'})"
            )
        routed.setdefault(owners[ident], []).append(answer)
    for owner, share in routed.items():
        check_answers(share, {record["id"]: record for record in waiting[owner]}, where=where)
    return routed


def allow_names(allow: Any, error: type[TetherError] = ConfigurationError) -> list[str]:
    """The names of the incompatible differences a resume accepts: None is none; else a list of
    strings (a string alone is refused: it would allow each of its letters)."""
    if allow is None:
        return []
    if isinstance(allow, str | bytes) or not isinstance(allow, Iterable):
        raise error(f"allow must be a list of difference names, got {allow!r:.80}")
    names = list(allow)
    if not all(isinstance(name, str) for name in names):
        raise error(f"allow must be a list of difference names, got {names!r:.80}")
    return names


def json_value(value: Any, what: str) -> Any:
    """A JSON copy of an interrupt reason or response (persisted with the run), or an ``InterruptError``."""
    try:
        return json_roundtrip_copy(value, what)
    except ShapeError as exc:
        raise InterruptError(str(exc)) from None


__all__ = [
    "IN_DOUBT",
    "RERUN",
    "allow_names",
    "answer_block",
    "answer_list",
    "answers_from",
    "as_blocks",
    "bodies_of",
    "check_answers",
    "json_value",
    "route_answers",
]
