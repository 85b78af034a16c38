"""`AgentResult`: what one invocation returns, and its JSON form."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import pydantic

from ._json import brief, json_roundtrip_copy
from ._messages import decode_message_bytes, validate_messages
from .errors import ResultError, ShapeError
from .interrupts import Interrupt
from .metrics import Metrics
from .types import Message, MetricsData

if TYPE_CHECKING:
    from .checkpoint import Checkpoint


@dataclass(frozen=True)
class Divergence:
    """Where a replayed run (``agent.replay``) first differs from the run it replays.

    Attributes:
        step: The original run's step that recorded the differing message (see ``store.history``).
        message: The index of the first differing message (counted over the whole run).
        field: The first differing field, e.g. ``messages[5].content[0].text``.
        original: The original run's value there (None when the original has no such field).
        replayed: The replayed run's value there (None when the replay has no such field).
    """

    step: int | None
    message: int
    field: str
    original: Any = None
    replayed: Any = None

    def to_dict(self) -> dict[str, Any]:
        """The divergence as JSON data."""
        return {"step": self.step, "message": self.message, "field": self.field, "original": self.original, "replayed": self.replayed}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Divergence:
        """Read :meth:`to_dict`'s output."""
        step = data.get("step")
        number = None if step is None else int(step)
        return cls(number, int(data["message"]), str(data["field"]), data.get("original"), data.get("replayed"))


RESULT_TYPE = "agent_result"
"""The ``type`` tag of a serialized result (Strands' ``AgentResult.to_dict``)."""

_BYTES_TAG = "__bytes_encoded__"


@dataclass
class AgentResult:
    """The outcome of an invocation; ``str(result)`` is the final text.

    Args:
        stop_reason: Why the invocation stopped: ``end_turn``, ``max_tokens``, ``interrupt``,
            ``checkpoint``, ``cancelled``, ``limit_cycles``, ``limit_tokens``, ``budget_exhausted``
            (the run's budget refused the next model call or tool round: resume it with a
            larger one), ``stop_sequence``, ``content_filtered`` or ``guardrail_intervened``.
        message: The last assistant message (at an ``after_tools`` checkpoint: the one whose
            tool calls just ran; their results are the last message of the conversation), or
            None when the model never answered.
        metrics: The run's metrics across every invocation (``metrics.invocation``: this call alone).
        state: A copy of the agent state when the invocation stopped.
        interrupts: The interrupts waiting for an answer (``stop_reason == "interrupt"``).
        checkpoint: The checkpoint to resume from (``stop_reason == "checkpoint"``), else None.
        structured_output: The validated structured output, when one was asked for.
        divergence: For ``agent.replay(...)``: where the replayed run first differs from the
            original (:class:`Divergence`), None when it does not (or for any other call).
    """

    stop_reason: str
    message: Message | None
    metrics: Metrics
    state: dict[str, Any] = field(default_factory=dict)
    interrupts: list[Interrupt] = field(default_factory=list)
    checkpoint: Checkpoint | None = None
    structured_output: Any = None
    divergence: Divergence | None = None

    @property
    def text(self) -> str:
        if self.message is None:
            return ""
        return "\n".join(block["text"] for block in self.message["content"] if "text" in block)

    def __str__(self) -> str:
        return self.text

    def to_dict(self) -> dict[str, Any]:
        """The result as a pure-JSON dict, in the shape Strands' ``AgentResult.to_dict`` writes.

        ``type``, ``message`` (bytes as Strands' ``{"__bytes_encoded__": true, "data": ...}``
        envelopes), ``stop_reason`` and ``checkpoint`` (``Checkpoint.to_dict()`` or None) are
        what Strands writes and reads; ``state``, ``interrupts``, ``structured_output`` (a
        pydantic model as its JSON data) and ``metrics`` are Tether's, and Strands ignores them;
        ``divergence`` is present only for a replay that diverged.
        """
        structured = self.structured_output
        if isinstance(structured, pydantic.BaseModel):
            structured = structured.model_dump(mode="json")
        try:
            data = {
                "type": RESULT_TYPE,
                "message": None if self.message is None else _encode_bytes(self.message),
                "stop_reason": self.stop_reason,
                "checkpoint": None if self.checkpoint is None else self.checkpoint.to_dict(),
                "state": json_roundtrip_copy(self.state, "result.state"),
                "interrupts": [dict(interrupt.to_dict()) for interrupt in self.interrupts],
                "structured_output": json_roundtrip_copy(structured, "result.structured_output"),
                "metrics": self.metrics.to_dict(),
            }
            if self.divergence is not None:
                data["divergence"] = json_roundtrip_copy(self.divergence.to_dict(), "result.divergence")
            return data
        except ShapeError as exc:
            raise ResultError(str(exc)) from None

    @classmethod
    def from_dict(cls, data: Any) -> AgentResult:
        """Read a dict written by :meth:`to_dict` (Tether's or Strands').

        Fields Strands does not write default to empty (``state``, ``interrupts``, metrics of
        zero); ``structured_output`` stays JSON data (the model class is not known here).

        Args:
            data: The serialized result.

        Raises:
            ResultError: ``data`` is not a serialized result (also a ``TypeError``, as in Strands).
            CheckpointError: its ``checkpoint`` is malformed.
        """
        from .checkpoint import Checkpoint, check_metrics

        if not isinstance(data, dict) or data.get("type") != RESULT_TYPE:
            got = data.get("type") if isinstance(data, dict) else type(data).__name__
            raise ResultError(f"AgentResult.from_dict: unexpected type {brief(got)}; expected a dict with type {RESULT_TYPE!r}")
        stop_reason = data.get("stop_reason")
        if not isinstance(stop_reason, str):
            raise ResultError(f"result.stop_reason must be a string, got {brief(stop_reason)}")
        try:
            message = None if data.get("message") is None else _message(data["message"])
            state = data.get("state") or {}
            if not isinstance(state, dict):
                raise ShapeError(["result", "state"], "must be an object")
            records = data.get("interrupts") or []
            if not isinstance(records, list) or not all(isinstance(r, dict) and isinstance(r.get("id"), str) for r in records):
                raise ShapeError(["result", "interrupts"], "must be a list of {id, name, ...} interrupt records")
            interrupts = [Interrupt.from_dict(json_roundtrip_copy(record, "result.interrupts")) for record in records]
            totals, invocation = _metrics(data.get("metrics"), check_metrics)
            structured = json_roundtrip_copy(data.get("structured_output"), "result.structured_output")
            state = json_roundtrip_copy(state, "result.state")
        except ShapeError as exc:
            raise ResultError(str(exc)) from None
        except (KeyError, TypeError) as exc:
            raise ResultError(f"result.interrupts holds a malformed record: {exc!r}") from None
        checkpoint_data = data.get("checkpoint")
        checkpoint = Checkpoint.from_dict(checkpoint_data) if checkpoint_data else None
        divergence_data = data.get("divergence")
        try:
            divergence = Divergence.from_dict(divergence_data) if isinstance(divergence_data, dict) else None
        except (KeyError, TypeError, ValueError) as exc:
            raise ResultError(f"result.divergence is malformed: {exc!r}") from None
        return cls(
            stop_reason=stop_reason,
            message=message,
            metrics=Metrics(totals, invocation),
            state=state,
            interrupts=interrupts,
            checkpoint=checkpoint,
            structured_output=structured,
            divergence=divergence,
        )


def _metrics(value: Any, check: Any) -> tuple[MetricsData, MetricsData | None]:
    """The run totals and the call's part of serialized metrics (zeros when absent)."""
    from .loop.state import new_metrics

    if value is None:
        return new_metrics(), None
    if not isinstance(value, dict):
        raise ShapeError(["result", "metrics"], "must be an object")
    totals = cast(MetricsData, check({k: v for k, v in value.items() if k != "invocation"}, "result.metrics"))
    invocation = value.get("invocation")
    return totals, None if invocation is None else cast(MetricsData, check(invocation, "result.metrics.invocation"))


def _encode_bytes(value: Any) -> Any:
    """``value`` with bytes as Strands' envelopes (new containers; other values shared)."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {_BYTES_TAG: True, "data": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, dict):
        return {key: _encode_bytes(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_encode_bytes(item) for item in value]
    return value


def _decode_bytes(value: Any, path: list[Any]) -> Any:
    """``value`` with Strands' bytes envelopes decoded (new containers)."""
    if isinstance(value, dict):
        if value.get(_BYTES_TAG) is True and isinstance(value.get("data"), str):
            try:
                return base64.b64decode(value["data"], validate=True)
            except (binascii.Error, ValueError):
                raise ShapeError(path + ["data"], "is not valid base64") from None
        return {key: _decode_bytes(item, path + [key]) for key, item in value.items()}
    if isinstance(value, list):
        return [_decode_bytes(item, path + [index]) for index, item in enumerate(value)]
    return value


def _message(value: Any) -> Message:
    """A checked copy of a serialized message, with Strands' and Tether's bytes envelopes decoded."""
    message = _decode_bytes(value, ["result", "message"])
    checked = validate_messages([message], ["result", "message"])
    decode_message_bytes(checked, ["result", "message"])
    return checked[0]
