"""The compatibility verdict of a resume: the run's manifest against the agent's code now.

A resume (a durable run resumed or answered, a checkpoint resumed, a snapshot with pending work
loaded) compares the manifest the run recorded with the current agent's and decides:

- ``same``: nothing differs;
- ``compatible``: something differs but no pending call is affected (a new tool, a new optional
  parameter, a changed prompt or model, a tool removed that nothing pending calls);
- ``migratable``: pending calls are affected and registered :class:`~tether.manifest.Migrations`
  cover every such change (a renamed tool, a reshaped input);
- ``incompatible``: a pending or in-doubt call's tool is gone, a required parameter was added or
  removed under it, or its effect contract weakened. The resume raises
  :class:`~tether.errors.IncompatibleResumeError` naming every difference, before anything is
  written, unless the caller allowed each of them (``allow=[...]``, by :attr:`Difference.name`
  or by code).

A *pending* call is a tool call of the open cycle with no result recorded: not yet run,
interrupted, or in doubt (started, killed before its result was stored).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .._json import json_copy
from ..errors import IncompatibleResumeError, ShapeError
from ..loop.core import tool_uses_of
from ..loop.state import RunState
from ..types import Message, ToolUse
from .migrations import Migrations
from .record import check_entry, check_manifest, weakened

VERDICTS: tuple[str, ...] = ("same", "compatible", "migratable", "incompatible")
"""The verdicts, mildest first."""

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Difference:
    """One difference between a run's manifest and the current agent's.

    Attributes:
        code: What changed: ``tool_added``, ``tool_removed``, ``tool_renamed``, ``required_added``,
            ``required_removed``, ``optional_added``, ``optional_removed``, ``schema_changed``,
            ``input_migrated``, ``input_invalid``, ``effect_weakened``, ``effect_changed``,
            ``compensation_changed``,
            ``prompt_changed``, ``model_changed``, ``conversation_manager_changed``,
            ``output_model_changed``, ``tether_changed``, ``no_manifest`` or ``manifest_unreadable``.
        subject: The tool (or field) it concerns, if any.
        verdict: What it makes of the resume: ``compatible``, ``migratable`` or ``incompatible``.
        detail: A sentence for people.
        calls: The pending calls (``toolUseId``) it affects.
    """

    code: str
    subject: str | None
    verdict: str
    detail: str
    calls: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """``code:subject`` (or the code alone): what ``allow=[...]`` names."""
        return self.code if self.subject is None else f"{self.code}:{self.subject}"

    def to_dict(self) -> dict[str, Any]:
        """The difference as JSON data (as a verdict step records it)."""
        return {
            "name": self.name,
            "code": self.code,
            "subject": self.subject,
            "verdict": self.verdict,
            "detail": self.detail,
            "calls": list(self.calls),
        }


@dataclass(frozen=True)
class Verdict:
    """The outcome of comparing a run's manifest with the current agent's.

    Attributes:
        verdict: ``same``, ``compatible``, ``migratable`` or ``incompatible``.
        differences: Every difference found, the gravest first.
        digest: The current manifest's digest.
        previous: The recorded manifest's digest (None: the run recorded none).
        allowed: The names of the incompatible differences the caller allowed.
        migrated: The pending calls the migrations change: ``toolUseId`` -> new ``name`` and ``input``.
    """

    verdict: str
    differences: tuple[Difference, ...]
    digest: str | None
    previous: str | None
    allowed: tuple[str, ...] = ()
    migrated: dict[str, tuple[str, Any]] = field(default_factory=dict)

    @property
    def blocking(self) -> list[Difference]:
        """The incompatible differences the caller did not allow."""
        return [d for d in self.differences if d.verdict == "incompatible" and d.name not in self.allowed]

    def to_dict(self) -> dict[str, Any]:
        """The verdict as JSON data (what a ``verdict`` step of a durable run records)."""
        return {
            "verdict": self.verdict,
            "differences": [d.to_dict() for d in self.differences],
            "digest": self.digest,
            "previous": self.previous,
            "allowed": list(self.allowed),
        }

    def summary(self) -> str:
        """One line for logs and ``tether show``: the verdict and the difference names."""
        names = ", ".join(d.name for d in self.differences)
        return self.verdict if not names else f"{self.verdict}: {names}"


@dataclass(frozen=True)
class ResumeCheck:
    """What one invocation checks a resume against: the agent's manifest now, its migrations,
    and the differences the caller allows.

    Args:
        manifest: The current agent's manifest (:meth:`tether.Agent.manifest`).
        migrations: The agent's registered migrations.
        allow: Names (``code:subject``) or codes of incompatible differences to accept.
    """

    manifest: dict[str, Any]
    migrations: Migrations = field(default_factory=Migrations)
    allow: frozenset[str] = frozenset()

    def check(self, recorded: Any, pending: list[ToolUse], *, what: str) -> Verdict:
        """Judge a resume whose run recorded manifest ``recorded`` and has ``pending`` calls;
        returns the verdict (logged), changing nothing.

        Raises:
            IncompatibleResumeError: The verdict is ``incompatible`` and not every incompatible
                difference was allowed.
        """
        verdict = judge(recorded, self.manifest, pending, self.migrations, self.allow)
        if verdict.blocking:
            _log.warning("%s: resume refused: %s", what, verdict.summary())
            raise IncompatibleResumeError(_refusal(what, verdict), verdict=verdict)
        log = _log.info if verdict.verdict != "same" else _log.debug
        log("%s: resume verdict %s", what, verdict.summary())
        return verdict

    def settle(self, run: RunState, recorded: Any, *, what: str) -> Verdict:
        """:meth:`check` the resume of ``run`` (whose manifest was ``recorded``), then apply the
        migrations to its pending calls; a refused resume leaves ``run`` exactly as it was."""
        verdict = self.check(recorded, pending_calls(run), what=what)
        if verdict.migrated:
            migrate_pending(run, verdict.migrated)
        return verdict


def _refusal(what: str, verdict: Verdict) -> str:
    blocking = verdict.blocking
    lines = "; ".join(f"{d.name} ({d.detail})" for d in blocking)
    names = ", ".join(repr(d.name) for d in blocking)
    return (
        f"{what} cannot resume with this agent's code: {lines}. Nothing was changed. Register a migration "
        "(agent.migrations.rename_tool(old, new) or agent.migrations.tool_input(name, fn)), restore the old "
        f"definition, or accept the differences with allow=[{names}]"
    )


def pending_calls(run: RunState) -> list[ToolUse]:
    """The run's pending tool calls: those of the open cycle (the last message's) with no
    result recorded, whether not yet run, interrupted or in doubt.

    Args:
        run: The run state (a loaded durable run, a snapshot's, the agent's own).
    """
    if not run.messages or run.messages[-1]["role"] != "assistant":
        return []
    done: Any
    context = run.interrupt_state.get("context")
    if run.cursor.phase == "tools":
        done = run.cursor.results
    elif run.interrupt_state.get("activated") and isinstance(context, dict) and context.get("phase") == "tools":
        done = context.get("results") or {}
    else:
        return []
    return [use for use in tool_uses_of(run.messages[-1]) if use["toolUseId"] not in done]


def migrate_pending(run: RunState, migrated: dict[str, tuple[str, Any]]) -> None:
    """Replace the run's last message by a copy whose pending calls have their migrated name
    and input (a new message object: a durable session stores it as a new row)."""
    last = run.messages[-1]
    content = []
    for block in last["content"]:
        use = block.get("toolUse") if isinstance(block, dict) else None
        if use is not None and use["toolUseId"] in migrated:
            name, tool_input = migrated[use["toolUseId"]]
            block = {**block, "toolUse": {**use, "name": name, "input": tool_input}}
        content.append(block)
    message: Message = {**last, "content": content}
    run.messages[-1] = message


class _Found:
    """Differences as they are found, merged by name."""

    def __init__(self) -> None:
        self.items: dict[str, Difference] = {}

    def add(self, code: str, subject: str | None, verdict: str, detail: str, call: str | None = None) -> None:
        key = code if subject is None else f"{code}:{subject}"
        calls = () if call is None else (call,)
        old = self.items.get(key)
        if old is not None:
            graver = VERDICTS.index(verdict) > VERDICTS.index(old.verdict)
            merged = old.calls + tuple(c for c in calls if c not in old.calls)
            self.items[key] = Difference(code, subject, verdict if graver else old.verdict, detail if graver else old.detail, merged)
            return
        self.items[key] = Difference(code, subject, verdict, detail, calls)

    def sorted(self) -> tuple[Difference, ...]:
        return tuple(sorted(self.items.values(), key=lambda d: (-VERDICTS.index(d.verdict), d.name)))


def judge(
    recorded: Any,
    current: dict[str, Any],
    pending: list[ToolUse],
    migrations: Migrations | None = None,
    allow: Iterable[str] = (),
) -> Verdict:
    """The verdict of resuming a run whose manifest is ``recorded`` (None: it has none) and
    whose pending calls are ``pending`` with an agent whose manifest is ``current``.

    Args:
        recorded: The run's manifest as stored (checked here; a damaged one is a difference).
        current: The current agent's manifest.
        pending: The run's pending tool calls.
        migrations: The agent's migrations (None: none).
        allow: Names or codes of incompatible differences the caller accepts.
    """
    migrations = migrations or Migrations()
    found = _Found()
    old: dict[str, Any] | None = None
    if recorded is None:
        if pending:
            detail = "the run recorded no manifest (written by an older Tether): only its pending calls are checked"
            found.add("no_manifest", None, "compatible", detail)
    else:
        try:
            old = check_manifest(recorded, "manifest")
        except ShapeError as exc:
            found.add("manifest_unreadable", None, "incompatible", f"the run's manifest cannot be read: {exc}")
    if old is not None and old.get("digest") != current.get("digest"):
        _definition_differences(old, current, found)
    migrated = _pending_differences(old, current, pending, migrations, found)
    differences = found.sorted()
    verdict = max((d.verdict for d in differences), key=VERDICTS.index, default="same")
    allowed_names = set(allow)
    allowed = tuple(d.name for d in differences if d.verdict == "incompatible" and (d.name in allowed_names or d.code in allowed_names))
    return Verdict(verdict, differences, current.get("digest"), None if old is None else old.get("digest"), allowed, migrated)


def _definition_differences(old: dict[str, Any], new: dict[str, Any], found: _Found) -> None:
    """What changed in the definition, each ``compatible`` (pending calls are judged apart)."""
    for key, code, what in (
        ("system_prompt", "prompt_changed", "the system prompt changed"),
        ("model", "model_changed", "the model changed"),
        ("conversation_manager", "conversation_manager_changed", "the conversation manager changed"),
        ("output_model", "output_model_changed", "the structured-output model changed"),
        ("tether", "tether_changed", "the Tether version changed"),
    ):
        if old.get(key) != new.get(key):
            detail = what if key == "system_prompt" else f"{what}: {old.get(key)!r} -> {new.get(key)!r}"
            found.add(code, None, "compatible", detail)
    old_tools, new_tools = old["tools"], new["tools"]
    for name in sorted(set(new_tools) - set(old_tools)):
        found.add("tool_added", name, "compatible", f"tool {name!r} was added")
    for name in sorted(set(old_tools) - set(new_tools)):
        found.add("tool_removed", name, "compatible", f"tool {name!r} was removed (no pending call uses it)")
    for name in sorted(set(old_tools) & set(new_tools)):
        for code, detail in _tool_changes(old_tools[name], new_tools[name], name):
            found.add(code, name, "compatible", detail)


def _tool_changes(old: dict[str, Any], new: dict[str, Any], name: str) -> list[tuple[str, str]]:
    """``(code, detail)`` of each change between two entries of tool ``name``."""
    changes: list[tuple[str, str]] = []
    old_required, new_required = set(old["required"]), set(new["required"])
    old_params, new_params = set(old["parameters"]), set(new["parameters"])
    if new_required - old_required:
        changes.append(("required_added", f"tool {name!r} now requires {sorted(new_required - old_required)}"))
    if old_required - new_required:
        changes.append(("required_removed", f"tool {name!r} no longer requires {sorted(old_required - new_required)}"))
    if (new_params - old_params) - new_required:
        added = sorted((new_params - old_params) - new_required)
        changes.append(("optional_added", f"tool {name!r} takes new optional parameters {added}"))
    if (old_params - new_params) - old_required:
        changes.append(("optional_removed", f"tool {name!r} no longer takes {sorted((old_params - new_params) - old_required)}"))
    if not changes and old["schema"] != new["schema"]:
        changes.append(("schema_changed", f"the schema of tool {name!r} changed (same parameters)"))
    if old["effect"] != new["effect"]:
        code = "effect_weakened" if weakened(old["effect"], new["effect"]) else "effect_changed"
        changes.append((code, f"the effect contract of tool {name!r} changed: {old['effect']} -> {new['effect']}"))
    if old.get("compensate") != new.get("compensate"):
        detail = f"the compensation of tool {name!r} changed: {old.get('compensate')} -> {new.get('compensate')}"
        changes.append(("compensation_changed", detail))
    return changes


def _callable(manifest: dict[str, Any]) -> dict[str, Any]:
    """The tools a pending call may name: the manifest's, and its structured-output tool."""
    output = manifest.get("output_model")
    if not isinstance(output, dict) or not isinstance(output.get("name"), str):
        return dict(manifest["tools"])
    try:
        check_entry(output, ["manifest", "output_model"])
    except ShapeError:
        return dict(manifest["tools"])
    return {**manifest["tools"], output["name"]: output}


_PENDING_VERDICT = {
    "required_added": "incompatible",
    "required_removed": "incompatible",
    "effect_weakened": "incompatible",
}


def _pending_differences(
    old: dict[str, Any] | None, current: dict[str, Any], pending: list[ToolUse], migrations: Migrations, found: _Found
) -> dict[str, tuple[str, Any]]:
    """Judge each pending call against the current tools; returns the migrated calls."""
    tools = _callable(current)
    old_tools: dict[str, Any] = {} if old is None else _callable(old)
    migrated: dict[str, tuple[str, Any]] = {}
    for use in pending:
        call, name, tool_input = use["toolUseId"], use["name"], use.get("input")
        target = name
        if name not in tools:
            renamed = migrations.renamed(name)
            if renamed is None or renamed not in tools:
                gone = f"pending call {call} calls tool {name!r}, which this agent does not have"
                if renamed is not None:
                    gone += f" (migrated to {renamed!r}, which it does not have either)"
                found.add("tool_removed", name, "incompatible", gone, call)
                continue
            target = renamed
            found.add("tool_renamed", name, "migratable", f"pending calls of {name!r} go to {renamed!r} (migrations.rename_tool)", call)
        before = old_tools.get(name) or old_tools.get(target)
        after = tools[target]
        reshape = migrations.input_migration(target)
        schema_moved = before is None or before["schema"] != after["schema"] or target != name
        changes = [] if before is None else _tool_changes(before, after, target)
        needs_input = any(code in ("required_added", "required_removed") for code, _ in changes)
        new_input = tool_input
        if reshape is not None and schema_moved:
            try:
                new_input = reshape(json_copy(tool_input if isinstance(tool_input, dict) else {}, "input"))
            except Exception as exc:  # a user's function: its failure is a difference, named
                detail = f"migrations.tool_input({target!r}) raised {type(exc).__name__}: {exc}"
                found.add("input_invalid", target, "incompatible", detail, call)
                continue
            missing = [key for key in after["required"] if not isinstance(new_input, dict) or key not in new_input]
            if missing:
                found.add("input_invalid", target, "incompatible", f"the migrated input of call {call} lacks required {missing}", call)
                continue
            found.add("input_migrated", target, "migratable", f"pending inputs of {target!r} reshaped (migrations.tool_input)", call)
            needs_input = False
        elif before is None:
            missing = [key for key in after["required"] if not isinstance(tool_input, dict) or key not in tool_input]
            if missing:
                found.add("required_added", target, "incompatible", f"pending call {call} of {target!r} lacks required {missing}", call)
                continue
        for code, detail in changes:
            if code in ("required_added", "required_removed") and not needs_input:
                continue
            found.add(code, target, _PENDING_VERDICT.get(code, "compatible"), f"{detail}, under pending call {call}", call)
        if target != name or new_input is not tool_input:
            migrated[call] = (target, new_input)
    return migrated


__all__ = ["VERDICTS", "Difference", "ResumeCheck", "Verdict", "judge", "migrate_pending", "pending_calls"]
