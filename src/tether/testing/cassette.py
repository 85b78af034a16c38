"""Cassettes: record a model's requests and streamed responses to JSON, replay them without it.

``Cassette.record(model, path)`` wraps any :class:`~tether.models.Model`; each call's
*normalized request* (messages, system prompt, tool specs, tool choice) and every stream event
of the response are appended to the cassette file, which is rewritten after each completed call
(a crash keeps what was recorded). ``Cassette.replay(path)`` is a model that answers from the
file, in this or a fresh process, with no network. A call is matched by its normalized request,
not by its position, so a run resumed in another process (which starts mid-cassette) is answered
too; a request the cassette does not hold raises :class:`~tether.errors.CassetteMismatchError`
naming the first field where it differs from the recorded request it was expected to be (the
next one in order), e.g. ``request.messages[3].content[0].text``. ``match="loose"`` compares the
messages' roles and content only (system prompt, tool specs and options may change).
``mode="once"`` records when the file is missing and replays it otherwise, like VCR libraries.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Literal

from .._diff import describe, first_difference
from .._json import dumps, dumps_compact, parse_json
from ..errors import CassetteError, CassetteMismatchError, ConfigurationError, ModelResponseError
from ..loop.stream import StreamAccumulator
from ..models.base import Model
from ..types import ModelRequest, StreamEvent

VERSION = 1
Match = Literal["strict", "loose"]
Mode = Literal["all", "once"]


def normalize(request: ModelRequest, match: Match = "strict") -> dict[str, Any]:
    """The recorded, compared form of a request (``loose``: messages' role and content only)."""
    messages = [{"role": m["role"], "content": m["content"]} for m in request["messages"]]
    if match == "loose":
        return {"messages": messages}
    return {
        "messages": messages,
        "system_prompt": request.get("system_prompt"),
        "tool_specs": request.get("tool_specs") or [],
        "tool_choice": request.get("tool_choice"),
    }


def _key(normalized: dict[str, Any]) -> str:
    return dumps_compact(normalized)


class RecordingModel:
    """A model that forwards to ``inner`` and appends every call to the cassette at ``path``.

    Args:
        inner: The model that answers (any :class:`~tether.models.Model`).
        path: The cassette file (created; an existing file is replaced at the first call).
    """

    def __init__(self, inner: Model, path: str | os.PathLike[str]) -> None:
        self.inner = inner
        self.path = Path(path)
        self.interactions: list[dict[str, Any]] = []

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    def get_config(self) -> dict[str, Any]:
        getter = getattr(self.inner, "get_config", None)
        return dict(getter()) if callable(getter) else {}

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        normalized = parse_json(dumps(normalize(request)), max_depth=None)  # a copy: the run's lists keep changing
        events: list[StreamEvent] = []
        async for event in self.inner.stream(request):
            events.append(event)
            yield event
        self.interactions.append({"request": normalized, "events": parse_json(dumps(events), max_depth=None)})
        self._save()

    def _save(self) -> None:
        data = {"version": VERSION, "model_id": self.inner.model_id, "interactions": self.interactions}
        temp = self.path.with_name(self.path.name + ".tmp")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temp.write_text(dumps(data))
        temp.replace(self.path)


class ReplayModel:
    """A model that answers from a cassette file (see the module docstring).

    Args:
        path: The cassette file written by :class:`RecordingModel`.
        match: ``"strict"`` (the whole normalized request) or ``"loose"`` (message content only).
    """

    def __init__(self, path: str | os.PathLike[str], match: Match = "strict") -> None:
        if match not in ("strict", "loose"):
            raise ConfigurationError(f"cassette match={match!r} must be 'strict' or 'loose'")
        self.path = Path(path)
        self.match: Match = match
        try:
            data = parse_json(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise CassetteError(f"cassette {str(self.path)!r} cannot be read: {exc}") from None
        if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get("interactions"), list):
            raise CassetteError(f"cassette {str(self.path)!r} is not a version-{VERSION} tether cassette")
        self.recorded_model_id = str(data.get("model_id", "?"))
        self.interactions: list[dict[str, Any]] = data["interactions"]
        self.by_key: dict[str, list[int]] = {}
        for index, item in enumerate(self.interactions):
            self._check(index, item)
            try:
                key = _key(self._compared(item["request"]))
            except ValueError as exc:  # a number too large for a float: not JSON
                raise self._damaged(index, f"request is not JSON ({exc})") from None
            self.by_key.setdefault(key, []).append(index)
        self.used: set[int] = set()
        self.last = -1

    def _check(self, index: int, item: Any) -> None:
        """Refuse a damaged interaction: its request must hold a list of messages, and its events
        must fold into a valid response (checked by the loop's own fold, as a live call is)."""
        if not isinstance(item, dict) or not isinstance(item.get("request"), dict) or not isinstance(item.get("events"), list):
            raise self._damaged(index, "must be an object with a request object and a list of events")
        if not isinstance(item["request"].get("messages"), list):
            raise self._damaged(index, "request.messages must be a list of messages")
        fold = StreamAccumulator()
        try:
            for event in item["events"]:
                fold.add(event)
            fold.message()
        except ModelResponseError as exc:
            raise self._damaged(index, str(exc)) from None

    def _damaged(self, index: int, problem: str) -> CassetteError:
        return CassetteError(f"cassette {str(self.path)!r}: interaction #{index + 1} {problem}; the file is damaged, re-record it")

    @property
    def model_id(self) -> str:
        return f"cassette:{self.recorded_model_id}"

    def get_config(self) -> dict[str, Any]:
        return {"provider": "cassette", "path": str(self.path), "match": self.match}

    def _compared(self, normalized: dict[str, Any]) -> dict[str, Any]:
        return {"messages": normalized["messages"]} if self.match == "loose" else normalized

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        normalized = parse_json(dumps(normalize(request, self.match)), max_depth=None)
        candidates = self.by_key.get(_key(normalized), [])
        index = next((i for i in candidates if i not in self.used), candidates[-1] if candidates else None)
        if index is None:
            raise self._mismatch(normalized)
        self.used.add(index)
        self.last = index
        for event in self.interactions[index]["events"]:
            yield event

    def _mismatch(self, normalized: dict[str, Any]) -> CassetteMismatchError:
        expected = self.last + 1
        if expected >= len(self.interactions):
            # the request that shares the most messages with this one
            expected = max(range(len(self.interactions)), key=lambda i: _shared(self.interactions[i]["request"], normalized), default=-1)
        if expected < 0:
            return CassetteMismatchError(f"cassette {str(self.path)!r} holds no interactions; record it first")
        recorded = self._compared(self.interactions[expected]["request"])
        path = first_difference(recorded, normalized) or []
        return CassetteMismatchError(
            f"cassette {str(self.path)!r}: the model request differs from recorded request #{expected + 1} at "
            f"{describe(path, 'request')}; re-record the cassette (delete it with mode='once') or use match='loose'"
        )


def _shared(recorded: dict[str, Any], normalized: dict[str, Any]) -> int:
    count = 0
    for a, b in zip(recorded["messages"], normalized["messages"], strict=False):
        if a != b:
            break
        count += 1
    return count


class Cassette:
    """Record and replay model calls (see :mod:`tether.testing.cassette`)."""

    @staticmethod
    def record(model: Model, path: str | os.PathLike[str], *, mode: Mode = "all", match: Match = "strict") -> Model:
        """Wrap ``model`` so its calls are written to the cassette at ``path``.

        Args:
            model: The model to record.
            path: The cassette file.
            mode: ``"all"`` always records (replacing the file); ``"once"`` records only when
                the file is missing and otherwise replays it (``model`` is then not called).
            match: How a replay under ``mode="once"`` matches requests (``"strict"``/``"loose"``).
        """
        if mode not in ("all", "once"):
            raise ConfigurationError(f"cassette mode={mode!r} must be 'all' or 'once'")
        if mode == "once" and Path(path).exists():
            return ReplayModel(path, match)
        return RecordingModel(model, path)

    @staticmethod
    def replay(path: str | os.PathLike[str], *, match: Match = "strict") -> Model:
        """A model answering from the cassette at ``path`` (no network); see :class:`ReplayModel`."""
        return ReplayModel(path, match)
